#!/usr/bin/env python3
"""Prints, for each folder given, its largest files and functions (by lines, braces matched).

Usage: scripts/code-sizes.py Sources/EventualKit/Sync Sources/EventualServer/Sync
(the sync cores' measures: no file over 350 lines, no function over 60)
"""
import pathlib
import re
import sys

DECLARATION = re.compile(r"^\s*(?:@?\w+(?:\([^)]*\))?\s+)*(func|init|deinit)\b")


def functions(path):
    lines = path.read_text().splitlines()
    found = []
    index = 0
    while index < len(lines):
        match = DECLARATION.match(lines[index])
        if not match:
            index += 1
            continue
        depth, started, end = 0, False, index
        for end in range(index, len(lines)):
            # NB: braces inside strings and comments are rare enough here to count as code.
            text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', lines[end].split("//")[0])
            depth += text.count("{") - text.count("}")
            started = started or "{" in text
            if started and depth <= 0:
                break
        name = re.search(r"(func\s+[^\s(<]+|init|deinit)", lines[index])
        found.append((end - index + 1, f"{path}:{index + 1} {name.group(1) if name else '?'}"))
        index += 1
    return found


for folder in sys.argv[1:]:
    files = sorted(pathlib.Path(folder).rglob("*.swift"))
    sizes = sorted(((len(f.read_text().splitlines()), str(f)) for f in files), reverse=True)
    funcs = sorted((size for f in files for size in functions(f)), reverse=True)
    print(f"{folder}: {len(files)} files")
    for lines, name in sizes[:3]:
        print(f"  file {lines:4d} lines  {name}")
    for lines, name in funcs[:3]:
        print(f"  func {lines:4d} lines  {name}")
