"""Packs the graphrun Python package into a wheel (PEP 427), for
`./bazelw build //python:wheel`: the package's .py files, the native module
under CPython's extension name, the graphrun CLI as graphrun/bin/graphrun
(worker processes, and a `graphrun` console command), and the dist-info
files with a RECORD of sha256 digests. Reproducible: fixed timestamps and
order."""

import argparse
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

TAG = "cp311-cp311-linux_x86_64"
EPOCH = (2026, 1, 1, 0, 0, 0)

CLI_SHIM = '''"""The `graphrun` command: the CLI this package carries."""
import os
import sys


def main():
    cli = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin", "graphrun")
    os.execv(cli, [cli] + sys.argv[1:])
'''


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).decode().rstrip("=")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--version", required=True)
    p.add_argument("--module", required=True)
    p.add_argument("--cli", required=True)
    p.add_argument("--readme", required=True)
    p.add_argument("files", nargs="*")
    a = p.parse_args()
    python_tag = "cp%d%d" % sys.version_info[:2]
    if not TAG.startswith(python_tag + "-"):
        sys.exit("make_wheel: this Python is %s, the wheel is tagged %s: build with the "
                 "machine's CPython 3.11" % (python_tag, TAG))
    ext = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    entries = []  # (name in the wheel, bytes, mode)
    for f in sorted(a.files):
        if f.endswith(".py") and os.path.basename(os.path.dirname(f)) == "graphrun":
            with open(f, "rb") as fh:
                entries.append(("graphrun/" + os.path.basename(f), fh.read(), 0o644))
    entries.append(("graphrun/_cli.py", CLI_SHIM.encode(), 0o644))
    with open(a.module, "rb") as fh:
        entries.append(("graphrun/_graphrun" + ext, fh.read(), 0o755))
    with open(a.cli, "rb") as fh:
        entries.append(("graphrun/bin/graphrun", fh.read(), 0o755))
    with open(a.readme, encoding="utf-8") as fh:
        readme = fh.read()
    info = "graphrun-%s.dist-info" % a.version
    metadata = (
        "Metadata-Version: 2.1\n"
        "Name: graphrun\n"
        "Version: %s\n"
        "Summary: Runs, trains and checkpoints TensorFlow graphs with graphrun's runtime\n"
        "Requires-Python: >=3.11,<3.12\n"
        "Requires-Dist: numpy\n"
        "Provides-Extra: progress\n"
        "Requires-Dist: tqdm; extra == \"progress\"\n"
        "Description-Content-Type: text/markdown\n"
        "\n%s" % (a.version, readme))
    wheel = ("Wheel-Version: 1.0\nGenerator: graphrun make_wheel.py\n"
             "Root-Is-Purelib: false\nTag: %s\n" % TAG)
    entry_points = "[console_scripts]\ngraphrun = graphrun._cli:main\n"
    entries.append((info + "/METADATA", metadata.encode(), 0o644))
    entries.append((info + "/WHEEL", wheel.encode(), 0o644))
    entries.append((info + "/entry_points.txt", entry_points.encode(), 0o644))
    record = "".join("%s,%s,%d\n" % (n, digest(d), len(d)) for n, d, _ in entries)
    record += "%s/RECORD,,\n" % info
    entries.append((info + "/RECORD", record.encode(), 0o644))
    tmp = a.out + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as z:
        for name, data, mode in entries:
            zi = zipfile.ZipInfo(name, EPOCH)
            zi.external_attr = (0o100000 | mode) << 16
            zi.compress_type = zipfile.ZIP_DEFLATED
            z.writestr(zi, data)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
