#!/bin/bash
# Lists what breaks the size rules of Sources, and fails when anything does:
# - a Swift or C file (.swift, .c, .h) of more than 400 lines;
# - a function of more than 60 lines (from its first line to its closing brace) whose header (the comment and
#   attribute lines right above it) does not say why it stays whole, with a line containing "stays whole:" and the
#   reason.
# Swift functions are `func`, `init`, `deinit` and `subscript` declarations at any indentation, ending at the first
# line after them that starts with `}` at their own indentation (the layout `make format` writes); requirements
# without a body (in protocols) are not functions. C functions are definitions starting at column 0 and ending at
# the next `}` at column 0.
# Vendored upstream code (Sources/CVMAF and Sources/CVMAFx86: libvmaf, kept as released so that an update is a copy)
# is not ours to split and is skipped.
#   scripts/sizes.sh [folder]   (default: Sources; a relative folder is taken from the repository's root)
set -eu
cd "$(dirname "$0")/.."
exec python3 - "${1:-Sources}" <<'PY'
import os
import re
import sys

MAX_FILE, MAX_FUNCTION, MARKER = 400, 60, "stays whole:"
VENDORED = {"CVMAF", "CVMAFx86"}  # folders of upstream code, by name (scripts/vendor-libvmaf.sh)
SWIFT_FUNC = re.compile(
    r"^(\s*)(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|private|fileprivate|internal|package|open|static|class|final"
    r"|override|mutating|nonmutating|nonisolated|convenience|required|dynamic|indirect|consuming|borrowing"
    r"|isolated|optional|lazy|prefix|postfix|infix)(?:\([^)]*\))?\s+)*(func\s|init\b|init[?!]|deinit\b|subscript\b)")
# Lines that continue a Swift declaration at its own indentation (swift-format's wrapped signatures).
SWIFT_CONTINUATION = re.compile(r"^(\)|->|where\b|async\b|throws\b|rethrows\b|\{)")
C_HEADER_LINE = re.compile(r"^\s*(//|/\*|\*)")
SWIFT_HEADER_LINE = re.compile(r"^\s*(//|/\*|\*|@)")


def indentation(line):
    return len(line) - len(line.lstrip(" "))


def header_says_why(lines, start, header_line):
    """Whether the comment and attribute lines right above line `start` contain the marker."""
    i = start - 1
    while i >= 0 and lines[i].strip() and header_line.match(lines[i]):
        if MARKER in lines[i]:
            return True
        i -= 1
    return False


def swift_functions(lines):
    """(first line, last line) of each Swift function with a body spanning more than one line, 0-based."""
    for start, line in enumerate(lines):
        match = SWIFT_FUNC.match(line)
        if not match or line.lstrip().startswith("//"):
            continue
        indent = len(match.group(1))
        opened = line.rstrip().endswith("{")
        for end in range(start + 1, len(lines)):
            text = lines[end].strip()
            if indentation(lines[end]) == indent and text.startswith("}"):
                if opened:
                    yield start, end
                break
            if opened or not text or indentation(lines[end]) > indent:
                # Inside the body (where a multi-line string or `#if` may start at column 0), or inside a wrapped
                # signature.
                continue
            if indentation(lines[end]) < indent or not SWIFT_CONTINUATION.match(text):
                break  # a requirement without a body, or a body on its first line
            opened = text.endswith("{")


def c_functions(lines):
    """(first line, last line) of each C function definition, 0-based."""
    i = 0
    while i < len(lines):
        line = lines[i]
        if not (line[:1].isalpha() or line[:1] == "_") or "(" not in line or "=" in line.split("(")[0]:
            i += 1
            continue
        start = i  # a declaration: a definition when its signature ends with "{", a prototype with ";"
        while i < len(lines) and not lines[i].rstrip().endswith(("{", ";")):
            i += 1
        if i < len(lines) and lines[i].rstrip().endswith("{"):
            while i < len(lines) and not lines[i].startswith("}"):
                i += 1
            if i < len(lines):
                yield start, i
        i += 1


if not os.path.isdir(sys.argv[1]):
    print(f"scripts/sizes.sh: no folder {sys.argv[1]}", file=sys.stderr)
    sys.exit(2)
problems = []
for folder, subfolders, names in os.walk(sys.argv[1]):
    subfolders[:] = [name for name in subfolders if name not in VENDORED]
    for name in sorted(names):
        if not name.endswith((".swift", ".c", ".h")):
            continue
        path = os.path.join(folder, name)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if len(lines) > MAX_FILE:
            problems.append(f"{path}: {len(lines)} lines (at most {MAX_FILE})")
        swift = name.endswith(".swift")
        header_line = SWIFT_HEADER_LINE if swift else C_HEADER_LINE
        for start, end in (swift_functions if swift else c_functions)(lines):
            length = end - start + 1
            if length > MAX_FUNCTION and not header_says_why(lines, start, header_line):
                problems.append(
                    f"{path}:{start + 1}: a function of {length} lines (at most {MAX_FUNCTION}, or a header that says"
                    f" why it {MARKER} ...): {lines[start].strip()[:80]}")

for problem in sorted(problems):
    print(problem)
if problems:
    print(f"{len(problems)} over the size rules (scripts/sizes.sh)", file=sys.stderr)
    sys.exit(1)
PY
