#!/usr/bin/env python3
"""Checks the relative links of Markdown files: each must name a file or
folder that exists, and a '#fragment' must name a heading of the Markdown
file it points to (GitHub's anchors).

    check_links.py ROOT [FILE.md...]   every link of the files (relative to
                                       ROOT; default: every Markdown file of
                                       the source tree, README.md and docs/
                                       among them)
    check_links.py --self-test         the checker finds broken links

Links in code blocks and code spans are not links. Web links (scheme://,
mailto:) are not checked. Exits 0 when every link resolves, 1 otherwise,
naming each broken one with its file and line.
"""

import os
import re
import sys
import tempfile

INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s{0,3}(```+|~~~+)")


def prose_lines(text):
    """(line number, line) of the lines outside fenced and indented code
    blocks, with code spans blanked."""
    fence = None
    previous_blank = True
    in_list = False
    for number, line in enumerate(text.split("\n"), 1):
        marker = FENCE.match(line)
        if fence:
            if marker and marker.group(1)[0] == fence[0] and len(marker.group(1)) >= len(fence):
                fence = None
            continue
        if marker:
            fence = marker.group(1)
            continue
        stripped = line.strip()
        if re.match(r"^\s*([-*+]|\d+\.)\s", line):
            in_list = True
        elif not stripped:
            pass
        elif not line.startswith(" "):
            in_list = False
        # an indented code block: four spaces after a blank line, outside a list
        if line.startswith("    ") and previous_blank and not in_list:
            continue
        previous_blank = not stripped or (previous_blank and line.startswith("    ") and not in_list)
        yield number, re.sub(r"(`+)(.+?)\1", lambda m: " " * len(m.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading: lower case, markup and punctuation
    dropped (letters, digits, '-' and '_' kept), spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links: their text
    text = text.replace("`", "").replace("*", "")
    text = text.lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        found = set()
        counts = {}
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for _, line in prose_lines(text):
            m = HEADING.match(line)
            if m:
                base = slug(m.group(2))
                n = counts.get(base, 0)
                counts[base] = n + 1
                found.add(base if n == 0 else f"{base}-{n}")
        for m in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", text):
            found.add(m.group(1))
        cache[path] = found
    return cache[path]


def broken_links(path):
    """(line, target, why) of each link of the file that does not resolve."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    problems = []
    for number, line in prose_lines(text):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        m = REFERENCE.match(line)
        if m:
            targets.append(m.group(1))
        for target in targets:
            if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            name, _, fragment = target.partition("#")
            resolved = os.path.normpath(os.path.join(os.path.dirname(path), name)) if name else path
            if not os.path.exists(resolved):
                problems.append((number, target, "no such file"))
            elif fragment and resolved.endswith(".md") and fragment not in anchors(resolved):
                problems.append((number, target, f"no heading '#{fragment}' in {os.path.basename(resolved)}"))
    return problems


def markdown_files(root):
    """The Markdown files of the source tree: not in hidden folders (.git,
    .venv) nor in build trees (folders with a CMakeCache.txt)."""
    found = []
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = sorted(
            s for s in subfolders
            if not s.startswith(".") and not os.path.exists(os.path.join(folder, s, "CMakeCache.txt"))
        )
        found += [os.path.relpath(os.path.join(folder, f), root) for f in sorted(files) if f.endswith(".md")]
    return found


def check(root, files):
    bad = 0
    for name in files:
        path = os.path.join(root, name)
        for number, target, why in broken_links(path):
            print(f"{name}:{number}: broken link '{target}': {why}")
            bad += 1
    print(f"{len(files)} files, {bad} broken links")
    return 1 if bad else 0


def self_test():
    """The checker must fail on broken links and pass good ones."""
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "docs"))
        with open(os.path.join(d, "docs", "b.md"), "w", encoding="utf-8") as f:
            f.write("# B\n\n## À-trous (ATrous/RT), 5 levels\n\n## Same\n\n## Same\n")
        with open(os.path.join(d, "a.md"), "w", encoding="utf-8") as f:
            f.write(
                "# A title\n\n"
                "[good](docs/b.md) [anchor](docs/b.md#à-trous-atrousrt-5-levels) [dup](docs/b.md#same-1)\n"
                "[self](#a-title) ![image](docs) [web](https://example.com/x.md)\n"
                "`[not a link](missing-in-span.md)`\n\n"
                "    [not a link](missing-in-code.md)\n\n"
                "```\n[not a link](missing-in-fence.md)\n```\n"
                "[missing](docs/c.md)\n"
                "[bad anchor](docs/b.md#nope)\n"
                "[bad self](#nope)\n"
                "[ref]: docs/missing-ref.md\n"
            )
        found = [(n, t) for n, t, _ in broken_links(os.path.join(d, "a.md"))]
    expected = [(12, "docs/c.md"), (13, "docs/b.md#nope"), (14, "#nope"), (15, "docs/missing-ref.md")]
    if found != expected:
        print(f"self-test: found {found}, expected {expected}")
        return 1
    print("self-test: the four broken links found, nothing else")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) < 2:
        print(__doc__)
        sys.exit(2)
    root = sys.argv[1]
    names = sys.argv[2:] or markdown_files(root)
    if not sys.argv[2:] and ("README.md" not in names or not any(n.startswith("docs" + os.sep) for n in names)):
        print(f"{root}: README.md or docs/ is missing")
        sys.exit(1)
    sys.exit(check(root, names))
