"""Fails to start the first FAILURES times it is run, then runs the toolbox server.

Run: `python flaky_start.py COUNTER_FILE FAILURES`. COUNTER_FILE counts the starts.
"""

import os
import sys

counter_file, failures = sys.argv[1], int(sys.argv[2])
try:
    with open(counter_file) as f:
        starts = int(f.read() or "0")
except FileNotFoundError:
    starts = 0
with open(counter_file, "w") as f:
    f.write(str(starts + 1))

if starts < failures:
    sys.stderr.write(f"flaky_start: failing start {starts + 1} of {failures}\n")
    sys.exit(1)

toolbox = os.path.join(os.path.dirname(os.path.abspath(__file__)), "toolbox.py")
os.execv(sys.executable, [sys.executable, toolbox])
