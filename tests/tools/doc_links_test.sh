#!/usr/bin/env bash
# Every relative link of the tree's Markdown pages resolves: README.md,
# CHANGELOG.md, docs/**/*.md and any other *.md outside build directories.
# A link's path (relative to the page) must name an existing file or
# folder, and a #fragment must name a heading of the page it points to
# (GitHub's anchors: lower case, punctuation dropped, spaces as hyphens, -1,
# -2... for repeats) or an explicit <a name/id>. Links to URLs (http:,
# https:, mailto:, ...) are not followed; code blocks and `code spans` are
# not read.
# Usage: doc_links_test.sh [SOURCE_DIR]   (default: this tree)
# Exits 77 (skipped) without python3.
set -euo pipefail
src=${1:-"$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"}
if ! command -v python3 >/dev/null 2>&1; then
  echo "SKIP: python3 not found" >&2
  exit 77
fi
exec python3 - "$src" <<'PY'
import os
import re
import sys
import unicodedata
from urllib.parse import unquote

root = os.path.abspath(sys.argv[1])
SKIP_DIRS = {".git", "node_modules", ".compose-tls"}


def pages():
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames
                             if d not in SKIP_DIRS and not d.startswith("build"))
        for f in sorted(filenames):
            if f.endswith(".md"):
                yield os.path.join(dirpath, f)


FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks, with
    code spans blanked out."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is None:
                yield n, re.sub(r"(`+)(?:(?!\1).)+?\1", "``", line)


def slug(heading):
    s = heading.strip().lower()
    # Markdown emphasis and links in the heading: keep their text.
    s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LN" or cat == "Mn":
            out.append(ch)
        elif ch == " ":
            out.append("-")
    return "".join(out)


_anchor_cache = {}


def anchors(path):
    if path in _anchor_cache:
        return _anchor_cache[path]
    found, seen = set(), {}
    fence = None
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = FENCE.match(line)
            if m:
                if fence is None:
                    fence = m.group(1)
                elif m.group(1) == fence:
                    fence = None
                continue
            if fence is not None:
                continue
            h = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                base = slug(h.group(1).replace("`", ""))
                k = seen.get(base, 0)
                seen[base] = k + 1
                found.add(base if k == 0 else "%s-%d" % (base, k))
            for a in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(a.group(1))
    _anchor_cache[path] = found
    return found


INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*(<[^>]*>|[^()\s]*(?:\([^()\s]*\)[^()\s]*)*)(?:\s+\"[^\"]*\")?\s*\)")
REFDEF = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")

bad = 0
count = 0
for page in pages():
    rel_page = os.path.relpath(page, root)
    for n, line in prose_lines(page):
        targets = [m.group(1) for m in INLINE.finditer(line)]
        m = REFDEF.match(line)
        if m:
            targets.append(m.group(1))
        for t in targets:
            t = t.strip("<>")
            if not t or SCHEME.match(t):
                continue
            count += 1
            path, _, frag = t.partition("#")
            path = unquote(path)
            dest = page if not path else os.path.normpath(
                os.path.join(os.path.dirname(page), path))
            if not os.path.exists(dest):
                print("%s:%d: %s: no such file" % (rel_page, n, t))
                bad += 1
                continue
            if frag and dest.endswith(".md") and os.path.isfile(dest):
                if unquote(frag) not in anchors(dest):
                    print("%s:%d: %s: no heading #%s in %s"
                          % (rel_page, n, t, frag, os.path.relpath(dest, root)))
                    bad += 1

if bad:
    print("%d broken link(s) of %d" % (bad, count))
    sys.exit(1)
print("%d relative links, all resolve" % count)
PY
