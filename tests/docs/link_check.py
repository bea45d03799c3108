#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/*.md (issue 22).

Every link that is not a URL must name a file inside the repository that
exists, and its #anchor, if any, a heading of that file (GitHub's slugs).
A link leaving the repository (../shared/...) fails even if the file is
there: a clone has only the repository.

    link_check.py REPO_ROOT [FILE.md ...]     (default: README.md docs/*.md)

Prints one line per broken link, FILE:LINE: what; exits 1 if any.
"""
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')


def strip_code(lines):
    """The lines with fenced blocks blanked and inline code spans removed."""
    out, fence = [], None
    for line in lines:
        m = re.match(r'^\s*(```+|~~~+)', line)
        if fence:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence):
                fence = None
            out.append('')
            continue
        if m:
            fence = m.group(1)
            out.append('')
            continue
        out.append(re.sub(r'(`+)(?:(?!\1).)+?\1', '', line))
    return out


def slug(text):
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', text)  # links: their text
    text = text.replace('`', '').strip().lower()
    text = re.sub(r'[^\w\- ]', '', text, flags=re.UNICODE)
    return text.replace(' ', '-')


def anchors(path, cache={}):
    if path not in cache:
        seen, out = {}, set()
        with open(path, encoding='utf-8') as f:
            for line in strip_code(f.read().splitlines()):
                m = HEADING.match(line)
                if not m:
                    continue
                s = slug(m.group(2))
                n = seen.get(s, 0)
                seen[s] = n + 1
                out.add(s if n == 0 else f'{s}-{n}')
        cache[path] = out
    return cache[path]


def check(root, md):
    problems = []
    with open(md, encoding='utf-8') as f:
        lines = strip_code(f.read().splitlines())
    for no, line in enumerate(lines, 1):
        for m in LINK.finditer(line):
            target = m.group(1)
            where = f'{os.path.relpath(md, root)}:{no}'
            if re.match(r'^[a-z][a-z0-9+.-]*:', target, re.I):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition('#')
            dest = os.path.realpath(os.path.join(os.path.dirname(md), path)) if path else md
            if os.path.commonpath([dest, root]) != root:
                problems.append(f'{where}: {target} leaves the repository')
                continue
            if not os.path.exists(dest):
                problems.append(f'{where}: {target}: no such file')
                continue
            if anchor:
                if not dest.endswith('.md') or os.path.isdir(dest):
                    problems.append(f'{where}: {target}: an anchor into a non-Markdown file')
                elif anchor not in anchors(dest):
                    problems.append(f'{where}: {target}: no heading #{anchor} in '
                                    f'{os.path.relpath(dest, root)}')
    return problems


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = os.path.realpath(argv[1])
    files = argv[2:] or ['README.md'] + sorted(
        os.path.join('docs', f) for f in os.listdir(os.path.join(root, 'docs')) if f.endswith('.md'))
    problems, links = [], 0
    for f in files:
        md = os.path.realpath(os.path.join(root, f))
        problems += check(root, md)
    for p in problems:
        print(p)
    print(f'link_check: {len(files)} files, {len(problems)} broken link(s)')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
