"""Session hooks: the fuzz test's counts (test_fuzz.py) at the end of the run, where CI's log
shows them without -s."""

import sys


def pytest_terminal_summary(terminalreporter):
    fuzz = sys.modules.get("test_fuzz")
    if fuzz is None or not fuzz.COUNTS:
        return
    write = terminalreporter.write_line
    terminalreporter.section("nudt fuzz counts")
    for key, n in sorted(fuzz.COUNTS.items()):
        write(f"{n:>6}  {key}")
    for e in fuzz.VALID_ERRORS:
        write(f"valid call that raised: {e}")
