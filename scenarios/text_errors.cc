// How a protobuf parse error becomes "FILE:LINE:COLUMN: field 'F': what is
// wrong": the parser of text format that reports every error, the scan of
// the text that names the field an error is about, and the words added to
// protobuf's message.
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "scenarios/loader.h"
#include "scenarios/loader_internal.h"
#include "scenarios/scenario.pb.h"

namespace viosim::internal {

using google::protobuf::TextFormat;

// ---------------------------------------------------------------------------
// Naming the field of a protobuf parse error
//
// Protobuf reports a parse error at a line and column, and its message does
// not always name the field ("Expected integer, got: abc"). To name it, the
// text before the error is scanned again with a small tokenizer that follows
// the nesting of `name { ... }` blocks and the last `name:` seen, resolving
// names against the message descriptors so repeated fields get an index.

namespace {

struct Token {
  enum Kind { kIdent, kNumber, kString, kSymbol };
  Kind kind;
  absl::string_view text;  // a part of the text being scanned
  Loc start;
  Loc end;  // just past the last character; end of line if unterminated
};

bool IsSymbol(const Token& t, char c) {
  return t.kind == Token::kSymbol && t.text.size() == 1 && t.text[0] == c;
}

// Splits text format into tokens, one at a time and only as far as asked,
// counting lines and columns as protobuf's tokenizer does (0-based; a tab
// advances to the next multiple of 8). The text must outlive the tokens.
class Tokenizer {
 public:
  explicit Tokenizer(absl::string_view text) : text_(text) {}

  // The next token, or nothing at the end of the text.
  std::optional<Token> Next() {
    while (i_ < text_.size()) {
      const char c = text_[i_];
      if (c == '#') {
        while (i_ < text_.size() && text_[i_] != '\n') Advance();
        continue;
      }
      if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
        Advance();
        continue;
      }
      return Scan(c);
    }
    return std::nullopt;
  }

  // The place just past the end of the text, once Next has returned nothing.
  Loc end() const { return Loc{line_, column_}; }

 private:
  static bool IsIdentChar(char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_';
  }

  void Advance() {
    const char c = text_[i_++];
    if (c == '\n') {
      ++line_;
      column_ = 0;
    } else if (c == '\t') {
      column_ += 8 - column_ % 8;
    } else {
      ++column_;
    }
  }

  // The token that starts with `c`, at the current place.
  Token Scan(char c) {
    Token t;
    t.start = Loc{line_, column_};
    const size_t begin = i_;
    const bool starts_number =
        absl::ascii_isdigit(static_cast<unsigned char>(c)) ||
        (c == '.' && i_ + 1 < text_.size() &&
         absl::ascii_isdigit(static_cast<unsigned char>(text_[i_ + 1])));
    if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') {
      t.kind = Token::kIdent;
      while (i_ < text_.size() && IsIdentChar(text_[i_])) Advance();
    } else if (starts_number) {
      t.kind = Token::kNumber;
      while (i_ < text_.size()) {
        const char n = text_[i_];
        const bool sign_of_exponent =
            (n == '-' || n == '+') && (text_[i_ - 1] == 'e' || text_[i_ - 1] == 'E');
        if (!IsIdentChar(n) && n != '.' && !sign_of_exponent) break;
        Advance();
      }
    } else if (c == '"' || c == '\'') {
      t.kind = Token::kString;
      Advance();
      bool closed = false;
      while (i_ < text_.size() && text_[i_] != '\n' && !closed) {
        if (text_[i_] == '\\' && i_ + 1 < text_.size() && text_[i_ + 1] != '\n') {
          Advance();
          Advance();
          continue;
        }
        closed = text_[i_] == c;
        Advance();
      }
      if (!closed) {
        // Protobuf reports the error somewhere inside; make sure the token
        // is seen as reaching past it.
        t.text = text_.substr(begin, i_ - begin);
        t.end = Loc{line_, std::numeric_limits<int>::max()};
        return t;
      }
    } else {
      t.kind = Token::kSymbol;
      Advance();
    }
    t.text = text_.substr(begin, i_ - begin);
    t.end = Loc{line_, column_};
    return t;
  }

  absl::string_view text_;
  size_t i_ = 0;
  int line_ = 0;
  int column_ = 0;
};

// What the scan found out about an error.
struct ErrorSite {
  std::string field;                       // dotted path; empty if unknown
  Loc loc;                                 // where to report it
  const FieldDescriptor* fd = nullptr;     // the field, if it exists
  const Descriptor* enclosing = nullptr;   // the message the field is in
  bool at_end = false;                     // the error is at the end of input
  int open_blocks = 0;                     // unclosed { or < at the error
  // What the scan was reading where the error is, so the wording can be
  // chosen from the text's structure, never from protobuf's English:
  bool unknown_field = false;  // a field name its message does not have
  bool at_value = false;       // the value of `fd` (or where it belongs)
  // At the end of input: what the text still lacked there, in words.
  std::string missing;
};

class ErrorLocator {
 public:
  ErrorLocator(absl::string_view text, const Descriptor* root)
      : text_(text), root_(root), tokens_(text) {
    Restart();
  }

  // Scans the tokens that end at or before `error` and says which field
  // the error concerns, from the text alone: protobuf's message is only
  // ever shown, never read. Errors come in the order of the text, so the
  // scan goes on from where the previous one stopped (the tokens before an
  // error are those before any later one); an earlier error starts over.
  ErrorSite Locate(const Loc& error) {
    if (Before(error, last_error_)) Restart();
    last_error_ = error;
    for (;;) {
      if (!lookahead_) {
        lookahead_ = tokens_.Next();
        if (!lookahead_) return Conclude(error, nullptr);
      }
      if (Before(error, lookahead_->end)) return Conclude(error, &*lookahead_);
      Step(*lookahead_);
      lookahead_.reset();
    }
  }

 private:
  enum State { kName, kAfterName, kValue, kList, kBracketName };

  // A field name as written, resolved against its message if possible.
  struct Field {
    std::string name;
    const FieldDescriptor* fd = nullptr;
    Loc loc;
  };

  struct Frame {
    const Descriptor* desc;  // null if the field is unknown
    std::string path;        // path of this message
    bool is_list = false;    // a [ ... ] list of values of `list_field`
    Field list_field;
    Field opener;            // the field whose value this block is
    std::string opener_path;
    std::map<std::string, int> seen;  // elements so far, per repeated field
    Field last;              // the last field whose value was completed
    std::string last_path;
  };

  // The message frame that holds the fields being read.
  Frame& Owner() {
    return frames_.back().is_list ? frames_[frames_.size() - 2] : frames_.back();
  }

  Field Resolve(absl::string_view name, const Loc& loc) {
    const Descriptor* desc = Owner().desc;
    std::string n(name);
    const FieldDescriptor* fd = desc == nullptr ? nullptr : desc->FindFieldByName(n);
    return Field{std::move(n), fd, loc};
  }

  // The path of the next value of `f` in `owner`; `consume` counts it.
  static std::string PathOf(Frame& owner, const Field& f, bool consume) {
    int index = -1;
    if (f.fd != nullptr && f.fd->is_repeated()) {
      index = consume ? owner.seen[f.name]++ : owner.seen[f.name];
    }
    return JoinPath(owner.path, f.name, index);
  }

  void CompleteScalar(const Field& f) {
    after_value_ = true;
    Frame& owner = Owner();
    owner.last_path = PathOf(owner, f, /*consume=*/true);
    owner.last = f;
  }

  void OpenBlock(const Field& f) {
    Frame block{nullptr, PathOf(Owner(), f, /*consume=*/true)};
    if (f.fd != nullptr) block.desc = f.fd->message_type();
    block.opener = f;
    block.opener_path = block.path;
    frames_.push_back(std::move(block));
    state_ = kName;
  }

  void OpenList(const Field& f) {
    Frame list{nullptr, Owner().path};
    list.is_list = true;
    list.list_field = f;
    frames_.push_back(std::move(list));
    state_ = kList;
  }

  void Step(const Token& t) {
    after_value_ = false;
    const bool opens = IsSymbol(t, '{') || IsSymbol(t, '<');
    const bool is_value = t.kind != Token::kSymbol;
    switch (state_) {
      case kName:
        if (t.kind == Token::kIdent) {
          pending_ = Resolve(t.text, t.start);
          state_ = kAfterName;
        } else if (IsSymbol(t, '[')) {
          pending_ = Field{"[", nullptr, t.start};
          state_ = kBracketName;
        } else if ((IsSymbol(t, '}') || IsSymbol(t, '>')) && frames_.size() > 1 &&
                   !frames_.back().is_list) {
          Frame done = std::move(frames_.back());
          frames_.pop_back();
          Frame& owner = Owner();
          owner.last = done.opener;
          owner.last_path = done.opener_path;
          state_ = frames_.back().is_list ? kList : kName;
        }
        break;  // separators and stray tokens change nothing
      case kBracketName:
        absl::StrAppend(&pending_.name, t.text);
        if (IsSymbol(t, ']')) state_ = kAfterName;
        break;
      case kAfterName:
      case kValue:
        if (opens) {
          OpenBlock(pending_);
        } else if (IsSymbol(t, '[')) {
          OpenList(pending_);
        } else if (IsSymbol(t, ':') && state_ == kAfterName) {
          state_ = kValue;
        } else if (IsSymbol(t, '-') && state_ == kValue) {
          // the sign of a number
        } else if (is_value && state_ == kValue) {
          CompleteScalar(pending_);
          state_ = kName;
        } else {
          state_ = kName;
        }
        break;
      case kList:
        if (opens) {
          OpenBlock(frames_.back().list_field);
        } else if (IsSymbol(t, ']')) {
          frames_.pop_back();
          state_ = kName;
        } else if (is_value) {
          CompleteScalar(frames_.back().list_field);
        }
        break;
    }
  }

  ErrorSite Conclude(const Loc& error, const Token* stop) {
    ErrorSite site;
    site.loc = error;
    site.at_end = stop == nullptr && !Before(error, tokens_.end());
    for (const Frame& f : frames_) {
      if (!f.is_list && &f != &frames_.front()) ++site.open_blocks;
    }
    Frame& owner = Owner();
    site.enclosing = owner.desc;

    auto at_field = [&](const Field& f, const std::string& path) {
      site.field = path;
      site.fd = f.fd;
    };
    // Protobuf reports a problem with a field's name (unknown, set twice,
    // a second member of a oneof) at the ':' or '{' after it, and an
    // unknown enum value at the token after the value: the scan stops
    // just past what the error is about, and points at it.
    const bool continues = stop == nullptr || stop->kind == Token::kIdent || IsSymbol(*stop, '}') ||
                           IsSymbol(*stop, '>') || IsSymbol(*stop, ',') || IsSymbol(*stop, ';');
    switch (state_) {
      case kName:
        if (after_value_ && continues && !site.at_end && owner.last.loc.known()) {
          at_field(owner.last, owner.last_path);
          site.loc = owner.last.loc;
          site.at_value = true;
        } else if (stop != nullptr && stop->kind == Token::kIdent) {
          const Field f = Resolve(stop->text, stop->start);
          at_field(f, PathOf(owner, f, false));
        } else {
          site.field = owner.path;
          site.fd = owner.opener.fd;
        }
        if (site.at_end && site.open_blocks > 0) site.missing = "a closing '}'";
        break;
      case kAfterName:
        at_field(pending_, PathOf(owner, pending_, false));
        if (stop != nullptr && (IsSymbol(*stop, ':') || IsSymbol(*stop, '{') || IsSymbol(*stop, '<'))) {
          if (pending_.loc.known()) site.loc = pending_.loc;
          site.unknown_field = pending_.fd == nullptr && owner.desc != nullptr && !absl::StartsWith(pending_.name, "[");
        }
        if (site.at_end) site.missing = absl::StrCat("':' and a value after '", pending_.name, "'");
        break;
      case kValue:
        at_field(pending_, PathOf(owner, pending_, false));
        // (A string left open is the lexer's error, not the field's type.)
        site.at_value = stop == nullptr || stop->kind != Token::kString ||
                        stop->end.column != std::numeric_limits<int>::max();
        if (site.at_end) site.missing = absl::StrCat("the value of '", pending_.name, "'");
        break;
      case kList:
        at_field(frames_.back().list_field, PathOf(owner, frames_.back().list_field, false));
        site.at_value = true;
        if (site.at_end) site.missing = "a closing ']'";
        break;
      case kBracketName:
        site.field = owner.path;
        if (site.at_end) site.missing = "a closing ']'";
        break;
    }
    return site;
  }

  // Back to the start of the text, before any token.
  void Restart() {
    tokens_ = Tokenizer(text_);
    lookahead_.reset();
    last_error_ = Loc{std::numeric_limits<int>::min(), std::numeric_limits<int>::min()};
    frames_.clear();
    frames_.push_back(Frame{root_, ""});
    state_ = kName;
    after_value_ = false;
    pending_ = Field{};
  }

  absl::string_view text_;
  const Descriptor* root_;
  Tokenizer tokens_;
  std::optional<Token> lookahead_;  // read, not yet stepped
  Loc last_error_;                  // the error the scan stopped at
  std::vector<Frame> frames_;
  State state_ = kName;
  Field pending_;
  bool after_value_ = false;  // the last token read ended a field's value
};

}  // namespace

std::string RenamedField(const Descriptor* d, absl::string_view name) {
  struct Rename {
    const Descriptor* message;
    const char* old_name;
    const char* now;
  };
  const Rename renames[] = {
      {Stack::VirtioBlk::descriptor(), "kick_outside_lock",
       "'kick_outside_lock' is now 'notify': AFTER_UNLOCK for true, UNDER_LOCK for false"},
      {Stack::VirtioBlk::descriptor(), "msix", "'msix' is now 'transport': VIRTIO_PCI for true, VIRTIO_MMIO for false"},
      {Stack::VhostNet::descriptor(), "wake_outside_lock",
       "'wake_outside_lock' is now 'wake_up_process': AFTER_UNLOCK for true, UNDER_LOCK for false"},
      {Stack::Raid10::descriptor(), "unplug_wake_up_barrier",
       "'unplug_wake_up_barrier' is now 'unplug_wake_up': IF_SLEEPER for true, UNDER_LOCK for false"},
      {Stack::Raid1::descriptor(), "wake_up_barrier",
       "'wake_up_barrier' is now 'wake_up': IF_SLEEPER for true, UNDER_LOCK for false"},
  };
  for (const Rename& r : renames) {
    if (r.message == d && name == r.old_name) return r.now;
  }
  return "";
}

namespace {

// Protobuf's `message` for the error at `site`, with what the text's
// structure says about it (the message is shown as protobuf wrote it and
// never read: its wording may change between protobuf versions).
std::string ExplainParseError(const ErrorSite& site, const std::string& message) {
  if (site.at_end) {
    std::string what = "unexpected end of file";
    if (site.open_blocks > 0) {
      absl::StrAppend(&what, " with ", site.open_blocks, site.open_blocks == 1 ? " block" : " blocks",
                      " still open");
    }
    if (!site.missing.empty()) absl::StrAppend(&what, "; missing ", site.missing);
    return what;
  }
  absl::string_view plain = absl::StripTrailingAsciiWhitespace(message);
  absl::ConsumeSuffix(&plain, ".");
  if (site.unknown_field) {
    const size_t at = plain.find("no field named \"");
    if (at != absl::string_view::npos) {
      absl::string_view name = plain.substr(at + 16);
      name = name.substr(0, name.find('"'));
      if (std::string now = RenamedField(site.enclosing, name); !now.empty()) return absl::StrCat(plain, "; ", now);
    }
    return absl::StrCat(plain, "; the fields of ", site.enclosing->full_name(), " are: ", FieldNames(site.enclosing));
  }
  if (site.at_value && site.fd != nullptr) {
    return absl::StrCat(plain, "; '", site.fd->name(), "' takes ", DescribeType(site.fd));
  }
  return std::string(plain);
}

// The deepest nesting of messages a text may have: a scenario nests about 6
// deep (variant { overlay { stack { ... } } }); 100 leaves room and keeps
// the parser's recursion, and every recursive walk after it, shallow.
constexpr int kMaxNesting = 100;

}  // namespace

void GatheringErrorCollector::AddError(int line, google::protobuf::io::ColumnNumber column,
                                       const std::string& message) {
  errors_.push_back({Loc{line, column}, message});
}
void GatheringErrorCollector::AddWarning(int line, google::protobuf::io::ColumnNumber column,
                                         const std::string& message) {
  errors_.push_back({Loc{line, column}, message});
}

bool ParseMessageText(const std::string& text, Message* out, ParseInfoTree* tree,
                      Diagnostics* d) {
  GatheringErrorCollector collector;
  TextFormat::Parser parser;
  parser.RecordErrorsTo(&collector);
  // Nesting deeper than any scenario needs is an error at the place it
  // happens, not a stack overflow.
  parser.SetRecursionLimit(kMaxNesting);
  parser.AllowUnknownField(true);
  if (tree != nullptr) parser.WriteLocationsTo(tree);
  const bool complete = parser.ParseFromString(text, out);
  if (!collector.errors().empty()) {
    ErrorLocator locator(text, out->GetDescriptor());
    for (const GatheringErrorCollector::Error& e : collector.errors()) {
      const ErrorSite site = locator.Locate(e.loc);
      d->Add(site.loc, site.field, ExplainParseError(site, e.message));
    }
  } else if (!complete) {
    d->Add(Loc{}, "", "the text could not be parsed");
  }
  return complete;
}

std::string ExplainTextError(const std::string& text, int line, int column, const std::string& message,
                             const google::protobuf::Descriptor* root) {
  ErrorLocator locator(text, root);
  const ErrorSite site = locator.Locate(Loc{line, column});
  Diagnostics d("");
  d.Add(site.loc, site.field, ExplainParseError(site, message));
  return std::string(d.ToStatus().message());
}

}  // namespace viosim::internal
