// The registered stack parts (scenarios/stack.h), one file each.
#ifndef VIOSIM_SCENARIOS_STACKS_PARTS_H_
#define VIOSIM_SCENARIOS_STACKS_PARTS_H_

#include "scenarios/stack.h"

namespace viosim::stacks {

// stack.nvme: a bare-metal host, blk-mq and the NVMe driver over an SSD.
StackPart NvmePart();
// stack.virtio_blk: a 2014 KVM/ARM guest's virtio_blk over virtio-mmio and
// QEMU 2.0 (the kick-lock case).
StackPart VirtioBlkPart();
// stack.virtio_blk_mq: an x86 guest's multiqueue virtio_blk with polling,
// one QEMU IOThread and an NVMe device (the blk-poll case).
StackPart VirtioBlkMqPart();
// stack.raid10: md raid10 near-2 over two brd ramdisks on a bare-metal host
// (the raid10-unplug case).
StackPart Raid10Part();
// stack.raid1: md raid1 over two brd ramdisks on a bare-metal host (the
// raid1 case on raid10-unplug's host).
StackPart Raid1Part();
// stack.vhost_net: the vhost-wake case's network stack (a 2013 KVM host's
// vhost-net and a guest's virtio-net), which carries workload.iperf.
StackPart VhostNetPart();
// workload.lockbench: threads taking one spinlock on the platform's
// machine, with no stack.
StackPart LockBenchPart();

}  // namespace viosim::stacks

#endif  // VIOSIM_SCENARIOS_STACKS_PARTS_H_
