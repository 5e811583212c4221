#include "scenarios/fio_options.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace fio {

const char kModeledEngineList[] = "libaio, io_uring, pvsync2, psync, sync";

namespace {

constexpr Support M = Support::kModeled;
constexpr Support N = Support::kNoEffect;

using K = ValueKind;

// General options viosim accepts: modeled ones first, then those without any
// effect on what viosim simulates. Order here is only for reading.
constexpr OptionInfo kAccepted[] = {
    // --- modeled: fill a field of JobOptions --------------------------------
    {"name", "", M, K::kText, "", ""},
    {"description", "", M, K::kText, "", ""},
    {"rw", "readwrite", M, K::kText, "", ""},
    {"rwmixread", "", M, K::kInt, "", ""},
    {"rwmixwrite", "", M, K::kInt, "", ""},
    {"bs", "blocksize", M, K::kInt, "", ""},
    {"bsrange", "blocksize_range", M, K::kRange, "", ""},
    {"ioengine", "", M, K::kText, "", ""},
    {"iodepth", "", M, K::kInt, "", ""},
    {"iodepth_batch", "iodepth_batch_submit", M, K::kInt, "", ""},
    {"iodepth_batch_complete_min", "iodepth_batch_complete", M, K::kInt, "", ""},
    {"iodepth_batch_complete_max", "", M, K::kInt, "", ""},
    {"numjobs", "", M, K::kInt, "", ""},
    {"size", "", M, K::kInt, "", ""},
    {"filesize", "", M, K::kInt, "", ""},
    {"runtime", "timeout", M, K::kTime, "", ""},
    {"time_based", "", M, K::kFlag, "", ""},
    {"ramp_time", "", M, K::kTime, "", ""},
    {"loops", "", M, K::kInt, "", ""},
    {"direct", "", M, K::kBool, "", ""},
    {"buffered", "", M, K::kBool, "", ""},
    {"group_reporting", "", M, K::kFlag, "", ""},
    {"stonewall", "wait_for_previous", M, K::kFlag, "", ""},
    {"new_group", "", M, K::kFlag, "", ""},
    {"wait_for", "", M, K::kText, "", ""},
    {"cpus_allowed", "", M, K::kText, "", ""},
    {"rate", "", M, K::kInt, "", ""},
    {"rate_iops", "", M, K::kInt, "", ""},
    {"rate_min", "ratemin", M, K::kInt, "", ""},
    {"rate_iops_min", "", M, K::kInt, "", ""},
    {"rate_process", "", M, K::kChoice, "", "linear|poisson"},
    {"rate_cycle", "ratecycle", M, K::kInt, "", ""},
    {"thinktime", "", M, K::kTime, "", ""},
    {"thinktime_spin", "", M, K::kTime, "", ""},
    {"thinktime_blocks", "", M, K::kInt, "", ""},
    {"thinktime_blocks_type", "", M, K::kChoice, "", "complete|issue"},
    {"bssplit", "", M, K::kText, "", ""},
    {"randrepeat", "", M, K::kBool, "", ""},
    {"norandommap", "", M, K::kFlag, "", ""},

    // --- no effect: accepted and echoed, nothing to simulate ----------------
    // Where the I/O goes: the device is the scenario's, not the job's.
    {"filename", "", N, K::kText, "", ""},
    {"filename_format", "", N, K::kText, "", ""},
    {"directory", "", N, K::kText, "", ""},
    {"unique_filename", "", N, K::kBool, "", ""},
    // File preparation before the measured run (no file system is modeled).
    {"fallocate", "", N, K::kChoice, "", "none|native|posix|keep|truncate|0|1"},
    {"fadvise_hint", "", N, K::kChoice, "", "0|1|random|sequential"},
    {"invalidate", "", N, K::kBool, "", ""},
    {"overwrite", "", N, K::kBool, "", ""},
    {"create_serialize", "", N, K::kBool, "", ""},
    {"create_fsync", "", N, K::kBool, "", ""},
    {"create_on_open", "", N, K::kBool, "", ""},
    {"allow_file_create", "", N, K::kBool, "", ""},
    {"allow_mounted_write", "", N, K::kBool, "", ""},
    {"unlink", "", N, K::kBool, "", ""},
    {"unlink_each_loop", "", N, K::kBool, "", ""},
    // Buffer contents and allocation (no device here looks at the data).
    {"refill_buffers", "", N, K::kFlag, "", ""},
    {"scramble_buffers", "", N, K::kBool, "", ""},
    {"zero_buffers", "", N, K::kFlag, "", ""},
    {"buffer_pattern", "", N, K::kText, "", ""},
    {"mem", "iomem", N, K::kChoice, "",
     "malloc|shm|shmhuge|mmap|mmapshared|mmaphuge|cudamalloc"},
    {"iomem_align", "mem_align", N, K::kInt, "", ""},
    {"hugepage-size", "", N, K::kInt, "", ""},
    {"lockmem", "", N, K::kInt, "", ""},
    // Random seeds: viosim draws from its own seeded generators.
    {"randseed", "", N, K::kInt, "", ""},
    {"allrandrepeat", "", N, K::kBool, "", ""},
    {"softrandommap", "", N, K::kBool, "", ""},
    // Process placement and identity on the host that runs fio.
    {"thread", "", N, K::kFlag, "", ""},
    {"numa_cpu_nodes", "", N, K::kText, "", ""},
    {"numa_mem_policy", "", N, K::kChoice, "", "default|prefer|bind|interleave|local"},
    {"uid", "", N, K::kInt, "", ""},
    {"gid", "", N, K::kInt, "", ""},
    {"clocksource", "", N, K::kChoice, "", "gettimeofday|clock_gettime|cpu"},
    // fio's per-job logs: written by viosim (models/fio/logs.h).
    {"write_bw_log", "", M, K::kTextOrBare, "", ""},
    {"write_lat_log", "", M, K::kTextOrBare, "", ""},
    {"write_iops_log", "", M, K::kTextOrBare, "", ""},
    {"write_hist_log", "", M, K::kTextOrBare, "", ""},
    {"per_job_logs", "", M, K::kBool, "", ""},
    {"log_avg_msec", "", M, K::kInt, "", ""},
    {"log_hist_msec", "", M, K::kInt, "", ""},
    {"log_hist_coarseness", "", M, K::kInt, "", ""},
    {"log_max_value", "", M, K::kBool, "", ""},
    {"log_offset", "", M, K::kBool, "", ""},
    {"log_prio", "", M, K::kBool, "", ""},
    // How fio keeps and stamps its logs (memory, compression, clock), the
    // I/O log (a note says viosim writes none), and disk statistics.
    {"write_iolog", "", N, K::kText, "", ""},
    {"log_entries", "", N, K::kInt, "", ""},
    {"log_compression", "", N, K::kInt, "", ""},
    {"log_compression_cpus", "", N, K::kText, "", ""},
    {"log_store_compressed", "", N, K::kBool, "", ""},
    {"log_unix_epoch", "", N, K::kBool, "", ""},
    {"log_alternate_epoch", "", N, K::kBool, "", ""},
    {"log_alternate_epoch_clock_id", "", N, K::kInt, "", ""},
    {"disk_util", "", N, K::kBool, "", ""},
    // Error handling (simulated I/O does not fail).
    {"continue_on_error", "", N, K::kChoice, "", "none|read|write|io|verify|all|0|1"},
    {"ignore_error", "", N, K::kText, "", ""},
    {"error_dump", "", N, K::kBool, "", ""},
    {"exitall_on_error", "", N, K::kFlag, "", ""},
    // Deprecated: fio 3.33 accepts and ignores them.
    {"rwmixcycle", "", N, K::kText, "", ""},
    {"verifysort", "", N, K::kText, "", ""},
    {"verifysort_nr", "", N, K::kText, "", ""},
    {"flow_watermark", "", N, K::kText, "", ""},
    // tiobench profile options: fio 3.33 accepts them in any job, and they
    // only act with profile=tiobench (which is not modeled).
    {"threads", "", N, K::kInt, "", ""},
    {"numruns", "", N, K::kInt, "", ""},
    {"block", "", N, K::kInt, "", ""},
    {"dir", "", N, K::kText, "", ""},

    // --- the one modeled engine option ---------------------------------------
    {"hipri", "", M, K::kFlag, "io_uring io_uring_cmd pvsync2 sg xnvme", ""},
};

// A not-modeled option's name and alias.
struct Names {
  const char* name;
  const char* alias = "";
};

// General options fio 3.33 knows and acts on, which viosim does not model.
constexpr Names kNotModeledGeneral[] = {
    // Files and where in them the I/O goes.
    {"lockfile"}, {"opendir"}, {"nrfiles", "nr_files"}, {"openfiles"}, {"file_service_type"},
    {"offset", "fileoffset"}, {"offset_align"}, {"offset_increment"}, {"file_append"},
    {"io_size", "io_limit"}, {"number_ios"}, {"fill_device", "fill_fs"}, {"create_only"},
    {"pre_read"},
    // I/O pattern beyond rw/bs/bsrange.
    {"rw_sequencer"}, {"ba", "blockalign"}, {"bs_unaligned", "blocksize_unaligned"},
    {"bs_is_seq_rand"}, {"random_generator"}, {"random_distribution"},
    {"percentage_random"}, {"percentage_sequential"},
    // Submission and completion behaviour.
    {"iodepth_low"}, {"serialize_overlap"}, {"io_submit_mode"},
    // Extra I/O: syncs, barriers, verification, trims, replay.
    {"fsync"}, {"fdatasync"}, {"write_barrier"}, {"sync_file_range"}, {"sync"}, {"end_fsync"},
    {"fsync_on_close"}, {"atomic"}, {"write_hint"},
    {"verify"}, {"do_verify"}, {"verify_interval"}, {"verify_offset"}, {"verify_pattern"},
    {"verify_fatal"}, {"verify_dump"}, {"verify_async"}, {"verify_backlog"},
    {"verify_backlog_batch"}, {"verify_async_cpus"}, {"experimental_verify"},
    {"verify_state_load"}, {"verify_state_save"}, {"verify_only"},
    {"trim_percentage"}, {"trim_verify_zero"}, {"trim_backlog"}, {"trim_backlog_batch"},
    {"read_iolog"}, {"read_iolog_chunked"}, {"replay_no_stall"}, {"replay_redirect"},
    {"replay_scale"}, {"replay_align"}, {"replay_time_scale"}, {"replay_skip"},
    {"merge_blktrace_file"}, {"merge_blktrace_scalars"}, {"merge_blktrace_iters"},
    // Zoned devices.
    {"zonemode"}, {"zonesize"}, {"zonecapacity"}, {"zonerange"}, {"zoneskip"},
    {"read_beyond_wp"}, {"max_open_zones"}, {"job_max_open_zones"}, {"ignore_zone_limits"},
    {"zone_reset_threshold"}, {"zone_reset_frequency"},
    // Pacing: think time, rate limits, latency targets, flows, steady state.
    {"startdelay"}, {"thinktime_iotime"}, {"rate_ignore_thinktime"}, {"max_latency"}, {"latency_target"}, {"latency_window"},
    {"latency_percentile"}, {"latency_run"}, {"flow_id"}, {"flow"}, {"flow_sleep"},
    {"steadystate", "ss"}, {"steadystate_duration", "ss_dur"}, {"steadystate_ramp_time", "ss_ramp"},
    {"exitall"}, {"exit_what"},
    // Scheduling, priorities and placement that change timing.
    {"nice"}, {"prio"}, {"prioclass"}, {"cpumask"}, {"cpus_allowed_policy"}, {"gpu_dev_id"},
    {"cgroup"}, {"cgroup_nodelete"}, {"cgroup_weight"}, {"ioscheduler"}, {"gtod_cpu"},
    // Data content a compressing or deduplicating device would see.
    {"buffer_compress_percentage"}, {"buffer_compress_chunk"}, {"dedupe_percentage"},
    {"dedupe_global"}, {"dedupe_mode"}, {"dedupe_working_set_percentage"},
    // What the reports contain or how they are computed and printed.
    {"stats"}, {"gtod_reduce"}, {"disable_lat"}, {"disable_clat"}, {"disable_slat"},
    {"disable_bw_measurement", "disable_bw"}, {"clat_percentiles"}, {"lat_percentiles"},
    {"slat_percentiles"}, {"percentile_list"}, {"significant_figures"},
    {"unified_rw_reporting"}, {"block_error_percentiles"}, {"bwavgtime"}, {"iopsavgtime"},
    {"kb_base"}, {"unit_base"},
    // Running other things.
    {"exec_prerun"}, {"exec_postrun"}, {"profile"},
    // act profile options (only act with profile=act).
    {"device-names"}, {"load"}, {"test-duration"}, {"threads-per-queue"},
    {"read-req-num-512-blocks"}, {"large-block-op-kbytes"}, {"prep"},
};

// Engine options fio 3.33 knows (engines/*.c), none modeled but hipri, with
// the engines that own each.
struct EngineOption {
  const char* name;
  const char* engines;
  const char* alias = "";
};
constexpr EngineOption kNotModeledEngine[] = {
    // libaio, io_uring, pvsync2 (modeled engines).
    {"userspace_reap", "libaio"},
    {"cmdprio_percentage", "libaio io_uring io_uring_cmd"},
    {"cmdprio_class", "libaio io_uring io_uring_cmd"},
    {"cmdprio", "libaio io_uring io_uring_cmd"},
    {"cmdprio_bssplit", "libaio io_uring io_uring_cmd"},
    {"nowait", "libaio io_uring io_uring_cmd pvsync2"},
    {"fixedbufs", "io_uring io_uring_cmd"},
    {"registerfiles", "io_uring io_uring_cmd"},
    {"sqthread_poll", "io_uring io_uring_cmd xnvme"},
    {"sqthread_poll_cpu", "io_uring io_uring_cmd"},
    {"nonvectored", "io_uring io_uring_cmd"},
    {"force_async", "io_uring io_uring_cmd"},
    {"uncached", "io_uring pvsync2"},
    {"hipri_percentage", "pvsync2"},
    {"cmd_type", "io_uring_cmd"},
    // Other engines.
    {"cpuload", "cpuio"},
    {"cpuchunks", "cpuio"},
    {"cpumode", "cpuio"},
    {"exit_on_io_done", "cpuio"},
    {"namenode", "libhdfs"},
    {"hdfsdirectory", "libhdfs"},
    {"chunk_size", "libhdfs dfs"},
    {"single_instance", "libhdfs gfapi gfapi_async"},
    {"hdfs_use_direct", "libhdfs"},
    {"port",
     "libhdfs net netsplice rdma librpma_apm_client librpma_apm_server "
     "librpma_gpspm_client librpma_gpspm_server"},
    {"hostname", "net netsplice rdma libhdfs"},
    {"interface", "net netsplice"},
    {"ttl", "net netsplice"},
    {"nodelay", "net netsplice"},
    {"protocol", "net netsplice", "proto"},
    {"listen", "net netsplice"},
    {"pingpong", "net netsplice"},
    {"window_size", "net netsplice"},
    {"mss", "net netsplice"},
    {"serverip",
     "librpma_apm_client librpma_apm_server librpma_gpspm_client librpma_gpspm_server"},
    {"direct_write_to_pmem",
     "librpma_apm_client librpma_apm_server librpma_gpspm_client librpma_gpspm_server"},
    {"busy_wait_polling", "librpma_apm_server librpma_gpspm_server"},
    {"verb", "rdma"},
    {"bindname", "rdma"},
    {"donorname", "e4defrag"},
    {"inplace", "e4defrag"},
    {"clustername", "rbd rados"},
    {"rbdname", "rbd"},
    {"clientname", "rbd rados"},
    {"busy_poll", "rbd rados"},
    {"conf", "rados"},
    {"touch_objects", "rados"},
    {"pool", "rbd rados dfs"},
    {"cont", "dfs"},
    {"object_class", "dfs"},
    {"svcl", "dfs"},
    {"skip_bad", "mtd"},
    {"stat_type", "filestat"},
    {"readfua", "sg"},
    {"writefua", "sg"},
    {"sg_write_mode", "sg"},
    {"https", "http"},
    {"http_host", "http"},
    {"http_user", "http"},
    {"http_pass", "http"},
    {"http_mode", "http"},
    {"http_verbose", "http"},
    {"http_s3_region", "http"},
    {"http_s3_key", "http"},
    {"http_s3_keyid", "http"},
    {"http_s3_sse_customer_key", "http"},
    {"http_s3_sse_customer_algorithm", "http"},
    {"http_s3_storage_class", "http"},
    {"http_swift_auth_token", "http"},
    {"uri", "nbd"},
    {"nfs_url", "nfs"},
    {"gpu_dev_ids", "libcufile"},
    {"cuda_io", "libcufile"},
    {"program", "exec"},
    {"arguments", "exec"},
    {"grace_time", "exec"},
    {"std_redirect", "exec"},
    {"xnvme_async", "xnvme"},
    {"xnvme_sync", "xnvme"},
    {"xnvme_admin", "xnvme"},
    {"xnvme_dev_nsid", "xnvme"},
    {"volume", "gfapi gfapi_async"},
    {"brick", "gfapi gfapi_async"},
};

constexpr const char* kModeledEngines[] = {"libaio", "io_uring", "pvsync2", "psync", "sync"};

// The other engines fio 3.33 can be built with (ioengines.c, engines/*.c).
constexpr const char* kNotModeledEngines[] = {
    "vsync", "pvsync", "io_uring_cmd", "posixaio", "solarisaio", "windowsaio",
    "rbd", "rados", "mmap", "splice", "netsplice", "sg", "null", "net", "cpuio",
    "rdma", "librpma_apm_client", "librpma_apm_server", "librpma_gpspm_client",
    "librpma_gpspm_server", "e4defrag", "falloc", "gfapi", "gfapi_async",
    "libhdfs", "ime_psync", "ime_psyncv", "ime_aio", "dev-dax", "filecreate",
    "filestat", "filedelete", "external", "libpmem", "pmemblk", "http", "nbd",
    "dfs", "nfs", "xnvme", "libcufile", "libzbc", "libiscsi", "mtd", "ftruncate",
    "exec", "cpp_null",
};

struct Table {
  std::vector<OptionInfo> not_modeled;
  std::vector<const OptionInfo*> all;
  absl::flat_hash_map<std::string, const OptionInfo*> by_name;
};

const Table& GetTable() {
  static const Table* const table = [] {
    auto* t = new Table;
    for (const Names& n : kNotModeledGeneral) {
      t->not_modeled.push_back(
          {n.name, n.alias, Support::kNotModeled, ValueKind::kUnchecked, "", ""});
    }
    for (const EngineOption& e : kNotModeledEngine) {
      t->not_modeled.push_back(
          {e.name, e.alias, Support::kNotModeled, ValueKind::kUnchecked, e.engines, ""});
    }
    for (const OptionInfo& o : kAccepted) t->all.push_back(&o);
    for (const OptionInfo& o : t->not_modeled) t->all.push_back(&o);
    for (const OptionInfo* o : t->all) {
      t->by_name.emplace(o->name, o);
      if (o->alias[0] != '\0') t->by_name.emplace(o->alias, o);
    }
    return t;
  }();
  return *table;
}

}  // namespace

const OptionInfo* FindOption(absl::string_view name) {
  const Table& t = GetTable();
  auto it = t.by_name.find(name);
  return it == t.by_name.end() ? nullptr : it->second;
}

const std::vector<const OptionInfo*>& AllOptions() { return GetTable().all; }

bool EngineOwns(const OptionInfo& option, absl::string_view engine) {
  for (absl::string_view e : absl::StrSplit(option.engines, ' ', absl::SkipEmpty())) {
    if (e == engine) return true;
  }
  return false;
}

EngineSupport FindEngine(absl::string_view engine) {
  for (const char* e : kModeledEngines) {
    if (engine == e) return EngineSupport::kModeled;
  }
  for (const char* e : kNotModeledEngines) {
    if (engine == e) return EngineSupport::kNotModeled;
  }
  return EngineSupport::kUnknown;
}

}  // namespace fio
