# Several devices (issue 15), on the simulator's SIMCUDA_DEVICES=2: one
# process driving two devices from one thread (multidev.c), and two ranks of
# a collective, one thread per device (collective.c). Included by
# CMakeLists.txt after prog_test() is defined.
prog_program(multidev multidev.c)
prog_program(collective collective.c)
set(PROG_TWO_DEVICES --env SIMCUDA_DEVICES=2)

prog_test(two_devices_independent_loops PROGRAM prog_multidev ARGS independent
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min replay_fraction=0.8)
prog_test(two_devices_legacy_streams_independent PROGRAM prog_multidev ARGS legacy
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min replay_fraction=0.8)
prog_test(peer_copy_orders_after_held_launches PROGRAM prog_multidev ARGS peer-copy
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min launches_replayed=100)
prog_test(cross_device_event_wait PROGRAM prog_multidev ARGS event-wait
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min launches_replayed=100)
prog_test(device_switch_mid_sequence PROGRAM prog_multidev ARGS switch-mid
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min launches_replayed=100)
prog_test(context_independent_kernel_on_another_devices_stream PROGRAM prog_multidev ARGS kernel-elsewhere
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min launches_replayed=100)
# A rank's part of a collective held by encore while the other rank waits
# for it: the flush deadline releases it (bounded wait, no deadlock; a part
# that waited 20 s would print a timeout). The test's own timeout is the
# backstop.
prog_test(collective_held_rank_does_not_deadlock PROGRAM prog_collective ARGS 40
  LABELS threads TIMEOUT 120
  CHECKS ${PROG_TWO_DEVICES} --timeout 100 --expect-launches-made --expect-min flushes.deadline=1
         --expect-min launches_replayed=50)

# The differential fuzzer with its streams spread over two (three) devices
# (fuzz.c, "Several devices"): device switches before most operations,
# per-device legacy streams, events and buffers moving between devices.
prog_test(fuzz_differential_two_devices PROGRAM prog_fuzz ARGS --seeds 0-999 --seeds-env FUZZ_SEEDS --devices=2
  LABELS fuzz TIMEOUT 300 CHECKS --env SIMCUDA_DEVICES=2 --fuzz --shrink --timeout 240 --expect-launches-made
         --expect-min launches_replayed=1000)
prog_test(fuzz_differential_three_devices_threads PROGRAM prog_fuzz
  ARGS --seeds 100000-100249 --seeds-env FUZZ_SEEDS/8 --min-threads 2 --devices=3
  LABELS "fuzz;threads" TIMEOUT 300 CHECKS --env SIMCUDA_DEVICES=3 --fuzz --shrink --shrink-budget 60 --timeout 200
         --expect-launches-made --expect-min launches_replayed=1000)
# What ncclGroupEnd does around an all-reduce of both devices from one thread
# (read off on two H100s): a fork to NCCL's own stream and a join back, one
# event per device, the collective's part launched with cuLaunchKernelEx and a
# packed argument buffer shorter than its parameters. Such launches must be
# recordable: refusing them (as encore did before) left 85 sequences
# unrecorded here, and on the GPU every sequence with an all-reduce.
prog_test(nccl_shaped_fork_join_replays PROGRAM prog_multidev ARGS nccl-shaped
  CHECKS ${PROG_TWO_DEVICES} --expect-launches-made --expect-min launches_replayed=200
         --expect-max learnt.unrecorded=10)
