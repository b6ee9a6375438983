"""`encore` and `python -m encore`: the launcher, scripts/encore, run from
this package (it finds libencore.so beside it, in ../lib). Every flag is the
launcher's own (`encore --help`); the exit status is the program's."""
import os
import shutil
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))


def _missing(path):
    sys.stderr.write(f"encore: {path} is missing: this installation of the encore package is incomplete\n")
    return 2


def main(argv=None):
    """Run the bundled launcher (a bash script) in place of this process."""
    args = sys.argv[1:] if argv is None else list(argv)
    script = os.path.join(_HERE, "bin", "encore")
    if not os.path.isfile(script):
        return _missing(script)
    bash = shutil.which("bash") or "/bin/bash"
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(bash, [bash, script] + args)


def log_summary(argv=None):
    """encore-log-summary: read encore's JSON-lines logs (see `encore-log-summary --help`)."""
    args = sys.argv[1:] if argv is None else list(argv)
    script = os.path.join(_HERE, "bin", "encore-log-summary")
    if not os.path.isfile(script):
        return _missing(script)
    sys.stdout.flush()
    os.execv(sys.executable, [sys.executable, script] + args)


if __name__ == "__main__":
    sys.exit(main())
