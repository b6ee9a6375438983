#!/usr/bin/env python3
"""README.md in one screen: what README must keep (README-sections.md).

Usage: test_readme.py [SOURCE-ROOT]"""
import os
import re
import sys

from checks import check, finish

root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
readme = open(os.path.join(root, "README.md"), encoding="utf-8").read()
lines = readme.splitlines()
first = "\n".join(lines[:60])

check("readme: the first 60 lines say what encore does", "encore makes CUDA programs" in first)
check("readme: the first 60 lines say who gains and who does not",
      "**Who gains:**" in first and "**Who does not:**" in first and "PyTorch" in first)
check("readme: the first 60 lines give the two commands",
      re.search(r"^scripts/demo\b", first, re.M) and re.search(r"^scripts/test\b", first, re.M))
check("readme: the first 60 lines show pip, the .deb and the source build",
      "pip install ." in first and "dpkg -i" in first and "cmake -S . -B build" in first)
m = re.search(r"<!-- install:begin -->(.*?)<!-- install:end -->", readme, re.S)
check("readme: the install lines are marked (the package tests run them)", m is not None)

opts = open(os.path.join(root, "policy", "options.h"), encoding="utf-8").read()
envs = sorted(set(re.findall(r'^\s*X\(\w+,\s*"(ENCORE[A-Z_]*)"', opts, re.M)))
t = re.search(r"<!-- options:begin -->(.*?)<!-- options:end -->", readme, re.S)
table = t.group(1) if t else ""
missing = [e for e in envs if f"| `{e}` |" not in table]
check("readme: every ENCORE_ option of policy/options.h is in the options table", envs and not missing, str(missing))

ci = open(os.path.join(root, ".ci", "run"), encoding="utf-8").read()
ci_cmd = [l.split("exec ", 1)[1].strip() for l in ci.splitlines() if l.startswith("exec ")]
check("readme: .ci/run runs exactly README's test command (with --full)",
      ci_cmd in (["scripts/test --full"], ["scripts/leaves-machine-alone scripts/test --full"])
      and re.search(r"^scripts/test +#", first, re.M)
      and re.search(r"^scripts/test --full +#", first, re.M), str(ci_cmd))
check("readme: the first 60 lines give the test commands' durations",
      re.search(r"^scripts/test +# about \d+(–\d+)? minutes", first, re.M)
      and re.search(r"^scripts/test --full +#.*about \d+(–\d+)? minutes", first, re.M))
minimums = re.findall(r"\b(1[0-9](?:\.[0-9])?)\+? or newer", readme)
check("readme: one CUDA minimum, stated once (12.4: cuFuncGetParamInfo)", minimums == ["12.4"], str(minimums))
results = re.search(r"^## Results\n(.*?)^## ", readme, re.S | re.M)
check("readme: one results table", results and len(re.findall(r"^\|---", results.group(1), re.M)) == 1
      and len(re.findall(r"^\|---", readme, re.M)) == 2)  # the results table and the options table
m2 = re.search(r"<!-- install:begin -->(.*?)<!-- install:end -->", readme, re.S)
check("readme: the user's cmake line builds without the tests",
      m2 and re.search(r"^cmake -S \. -B build -DENCORE_TESTS=OFF ", m2.group(1), re.M))
check("readme: says pip install . needs the network and gives the offline route",
      "scikit-build-core" in readme and "--no-index" in readme and "offline" in readme)

links = re.findall(r"\]\(((?:docs|tests|scripts)/[^)#]*)\)", readme)
broken = [l for l in links if not os.path.exists(os.path.join(root, l))]
check("readme: every link into the tree resolves", links and not broken, str(broken))
for doc in ("running.md", "report.md", "log.md", "how-it-works.md", "results.md", "maintainers.md", "simulated.md"):
    check(f"readme: docs/{doc} exists and README links it",
          os.path.exists(os.path.join(root, "docs", doc)) and f"docs/{doc}" in readme)
finish()
