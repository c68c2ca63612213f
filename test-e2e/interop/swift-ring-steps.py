#!/usr/bin/python3
"""Runs many swift-ring-builder commands in one Python process.

Usage: /usr/bin/python3 swift-ring-steps.py <steps.json>
  steps.json: [["<builder_file>", "create", "8", "3", "1"], ["<builder_file>", "add", …], …]
Prints one JSON line per command: {"args": [...], "code": <exit code>, "output": "<its stdout>"};
stops after the first command that exits with 2 or more (an error; 1 is a warning).

Why: each /usr/bin/swift-ring-builder run starts Python and imports Swift again, which takes
seconds on a busy machine; the test harness builds three or more rings of three commands each.
This calls the same entry point (swift.cli.ringbuilder.main) with the same arguments, so the files
and exit codes are those of the command line tool.
"""
import contextlib
import io
import json
import sys
import traceback

from swift.cli.ringbuilder import main

if len(sys.argv) != 2:
    sys.exit(__doc__)
with open(sys.argv[1]) as f:
    steps = json.load(f)

for args in steps:
    out = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(out):
        try:
            main(['swift-ring-builder'] + args)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 2)
        except Exception:  # what swift-ring-builder's excepthook turns into exit 2
            traceback.print_exc(file=out)
            code = 2
    sys.stdout.write(json.dumps({'args': args, 'code': code, 'output': out.getvalue()}) + '\n')
    sys.stdout.flush()
    if code >= 2:
        break
