#!/usr/bin/env python3
"""Compare the PTX of the catalogue (kernels/ and reference/) between two build folders.

    scripts/compare_ptx.py BASE_BUILD NEW_BUILD [--only kernels/rmsnorm,kernels/common] [-j N]

A change that only moves or renames host code must leave every kernel's PTX as it was. For each
catalogue source compiled in NEW_BUILD (its compile_commands.json) the PTX is produced from that
build's own compile command (-c swapped for -ptx, for the virtual architecture the command
targets: compute_90, or compute_90a for the *_sm90a.cu files, whose objects carry no PTX), and
compared with the PTX of the same source path in BASE_BUILD. The build folders may belong to
different checkouts: sources are matched by their path inside the checkout.

Before comparing, what does not describe the kernels is dropped: line information (.loc, .file
and the debug sections -lineinfo writes), comments, the compiler's banner, and the ids of anonymous
namespaces (derived from the file's path), and the checkout's folder inside string constants (an
assert names its file by its absolute path). The output is one
line per source (identical / differs, with the first differing lines) and a summary; the exit
code is 0 when every source is identical, 1 otherwise, 2 on bad input.
"""
import argparse
import concurrent.futures
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

CATALOGUE_TARGETS = ("CMakeFiles/kwb_catalogue.dir/", "CMakeFiles/kwb_catalogue_sm90a.dir/")


def catalogue_commands(build):
    """{path inside the checkout: (command, checkout root)} for the catalogue's CUDA sources."""
    path = os.path.join(build, "compile_commands.json")
    try:
        entries = json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit(f"compare_ptx: cannot read {path} ({e}): configure that build first "
                 f"(cmake --preset default writes it)")
    out = {}
    for e in entries:
        cmd = e.get("command") or " ".join(e["arguments"])
        if not e["file"].endswith(".cu") or not any(t in cmd for t in CATALOGUE_TARGETS):
            continue
        root = re.search(r"-I(\S+)", cmd).group(1)  # the checkout is the first include folder
        out[os.path.relpath(e["file"], root)] = (cmd, e["directory"])
    return out


def ptx_command(cmd, out_path):
    args = shlex.split(cmd)
    if args and args[0].endswith("ccache"):
        args = args[1:]
    result, skip = [], False
    for a in args:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        if a.startswith("--generate-code=") or a.startswith("-gencode="):
            arch = re.search(r"arch=(compute_\w+)", a).group(1)
            result.append(f"-arch={arch}")
            continue
        result.append(a)
    return result + ["-ptx", "-o", out_path]


# Symbols in an anonymous namespace carry an id the compiler derives from the file's path and
# options (_GLOBAL__N__b9d22879_17_baseline_eager_cu_d679a179_7963): it names the file, not the
# kernel, and changes with the checkout's folder. The digits that follow it run into the next
# name's length, so both sides drop the same run.
ANONYMOUS_NAMESPACE = re.compile(r"\d*_GLOBAL__N__[0-9a-f]+_\d+_\w+?_[0-9a-f]{8}_\d+")


# A string constant (an assert's message and file) as bytes: {47, 116, 109, ...}.
STRING_CONSTANT = re.compile(r"^(\.global \.align 1 \.b8 \$str\S*)\[\d+\] = \{([\d, ]+)\};$")


def without_checkout(line, root):
    """An assert embeds its file's absolute path: read the constant as text, the checkout folder masked."""
    m = STRING_CONSTANT.match(line.strip())
    if not m:
        return line
    text = bytes(int(b) for b in m.group(2).split(",")).decode("latin-1")
    return f'{m.group(1)} = "{text.replace(root, "<checkout>")}"'


def normalized(ptx, root):
    lines, in_debug = [], False
    for line in ptx.splitlines():
        s = line.strip()
        if s.startswith(".section") and ".debug" in s:
            in_debug = True
        if in_debug:
            if s == "}":
                in_debug = False
            continue
        if not s or s.startswith("//") or s.startswith(".loc") or s.startswith(".file"):
            continue
        line = re.sub(r"\s*//.*$", "", line.rstrip())
        lines.append(without_checkout(ANONYMOUS_NAMESPACE.sub("<anon>", line), root))
    return lines


def blocks(lines):
    """Top-level declarations (an .entry or .func with its body, a .global, ...) as whole texts."""
    out = []
    for line in lines:
        if not out or not line[:1].isspace() and line not in ("{", "}", ")") and not line.startswith((")", "{")):
            out.append(line)
        else:
            out[-1] += "\n" + line
    return out


def ptx_of(cmd, directory):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.ptx")
        proc = subprocess.run(ptx_command(cmd, out), cwd=directory, capture_output=True, text=True)
        if proc.returncode != 0:
            return None, proc.stderr.strip().splitlines()[-5:]
        root = re.search(r"-I(\S+)", cmd).group(1)
        return normalized(open(out).read(), root), None


def compare(rel, base, new):
    new_ptx, err = ptx_of(*new)
    if new_ptx is None:
        return rel, "error", [f"new build: {l}" for l in err]
    base_ptx, err = ptx_of(*base)
    if base_ptx is None:
        return rel, "error", [f"base build: {l}" for l in err]
    if base_ptx == new_ptx:
        return rel, "identical", []
    if sorted(blocks(base_ptx)) == sorted(blocks(new_ptx)):
        return rel, "reordered", ["the same functions, emitted in another order"]
    diff = list(difflib.unified_diff(base_ptx, new_ptx, "base", "new", n=0, lineterm=""))
    return rel, "differs", diff[2:12]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("base_build")
    p.add_argument("new_build")
    p.add_argument("--only", default="", help="comma-separated path prefixes (kernels/rmsnorm,...)")
    p.add_argument("-j", type=int, default=os.cpu_count() or 1)
    a = p.parse_args()
    base, new = catalogue_commands(a.base_build), catalogue_commands(a.new_build)
    prefixes = [x for x in a.only.split(",") if x]
    sources = sorted(s for s in new if not prefixes or any(s.startswith(x) for x in prefixes))
    if not sources:
        print(f"compare_ptx: no catalogue source in {a.new_build}" + (f" under {a.only}" if prefixes else ""),
              file=sys.stderr)
        return 2
    missing = [s for s in sources if s not in base]
    counts = {"identical": 0, "reordered": 0, "differs": 0, "error": 0, "new source": len(missing)}
    for s in missing:
        print(f"new source  {s} (not in the base build)")
    with concurrent.futures.ThreadPoolExecutor(a.j) as pool:
        jobs = [pool.submit(compare, s, base[s], new[s]) for s in sources if s in base]
        for job in concurrent.futures.as_completed(jobs):
            rel, verdict, detail = job.result()
            counts[verdict] += 1
            print(f"{verdict:<10}  {rel}", flush=True)
            for line in detail:
                print(f"            {line}")
    gone = sorted(s for s in base if s not in new and (not prefixes or any(s.startswith(x) for x in prefixes)))
    for s in gone:
        print(f"removed     {s} (in the base build only)")
    print("PTX: " + ", ".join(f"{n} {k}" for k, n in counts.items() if n or k == "identical")
          + (f", {len(gone)} removed" if gone else ""))
    return 0 if counts["identical"] + counts["reordered"] == len(sources) - len(missing) and not (
        counts["differs"] or counts["error"]) else 1


if __name__ == "__main__":
    sys.exit(main())
