"""Why does a torch.cuda.graph of the AOTInductor runner fault at replay (without encore)?

    python3 tests/bench/aoti_graph_why.py CASE [--dump DIR]

One case per process (a fault ends it): the transformer of bench_never_slower.py, packaged by
AOTInductor (BENCH_AOTI_DIR), loaded, run eagerly once for a reference, warmed up three times on
a side stream, captured in one torch.cuda.graph, replayed, compared. Cases:
  relaxed         aoti_load_package(path), relaxed capture (what the bench did)
  relaxed-st      the same with run_single_threaded=True (the runner made for CUDA graphs)
  global-st       run_single_threaded=True, global capture mode
  relaxed-st-keep run_single_threaded=True; the input and every output of the warm-up kept alive
Prints CASE lines: capture, replay and the comparison with the eager output. With --dump, the
captured graph's DOT file (kernel names and parameters) is written there."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_never_slower as b  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("case")
    ap.add_argument("--dump")
    a = ap.parse_args()
    import torch
    import torch._inductor
    dev = b.torch_device()
    path = b.aoti_package("transformer")
    st = a.case.endswith("-st") or "-st-" in a.case
    fn = torch._inductor.aoti_load_package(path, run_single_threaded=st) if st else torch._inductor.aoti_load_package(path)
    torch.manual_seed(0)
    x = torch.randn(1, 1, 768, device=dev)
    kept = []

    def step():
        with torch.no_grad():
            out = fn(x)
        return out[0] if isinstance(out, (list, tuple)) else out
    ref = step().clone()
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            o = step()
            if a.case.endswith("-keep"):
                kept.append(o)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    if a.dump:
        g.enable_debug_mode()
    mode = "global" if a.case.startswith("global") else "relaxed"
    try:
        with torch.cuda.graph(g, capture_error_mode=mode):
            out = step()
    except Exception as e:  # noqa: BLE001
        print(f"CASE {a.case}: capture failed: {type(e).__name__}: {str(e)[:300]}", flush=True)
        return 1
    print(f"CASE {a.case}: captured ({mode})", flush=True)
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        g.debug_dump(os.path.join(a.dump, f"{a.case}.dot"))
    for i in range(3):
        g.replay()
        torch.cuda.synchronize()
        print(f"CASE {a.case}: replay {i} ran; same as eager: {torch.equal(out, ref)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
