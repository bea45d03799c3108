#!/usr/bin/env python3
"""docs/operations.md's configuration reference against the config readers.

Asks each daemon which keys it accepts, without starting it: a file with an
unknown key at the root (always, so no probe file is ever valid) is refused
with "unknown field 'X' in WHAT (expected one of: a, b, ...)", and the same
probe one level down lists a section's keys. The set found must equal the
keys of the reference table for that daemon (`retry_presets.<name>.x` for
the presets' fields).

    config_reference_test.py BIN_DIR [DOC]

BIN_DIR holds orchestrator and edge-agent. Exit 1 with one line per key
documented but not accepted, or accepted but not documented.
"""
import os
import re
import subprocess
import sys
import tempfile

PROBE = 'zzzzzzzzzzzzzzzzprobe'  # far (edit distance) from every real key: the full list is shown
SUB = 'yyyyyyyyyyyyyyyyprobe'
UNKNOWN = re.compile(r"unknown field '(\w+)' in (.+?) \(expected one of: ([^)]*)\)")


def refusals(binary, text, tmp):
    path = os.path.join(tmp, 'probe.yaml')
    with open(path, 'w') as f:
        f.write(text)
    args = [binary, '--config', path]
    if binary.endswith('edge-agent'):
        args += ['--node-id', 'probe', '--state-dir', os.path.join(tmp, 'state')]
    p = subprocess.run(args, capture_output=True, text=True, timeout=20)
    if p.returncode == 0:
        sys.exit(f'{binary} accepted a probe file:\n{text}')
    out = {}
    for key, what, allowed in UNKNOWN.findall(p.stdout + p.stderr):
        out[(key, what)] = [a.strip() for a in allowed.split(',')]
    return out, p.stdout + p.stderr


def accepted_keys(binary, root_what, tmp):
    found, log = refusals(binary, f'{PROBE}: 1\n', tmp)
    if (PROBE, root_what) not in found:
        sys.exit(f'{binary}: no list of keys for {root_what!r} in:\n{log}')
    keys = set()
    for key in found[(PROBE, root_what)]:
        sub, _ = refusals(binary, f'{PROBE}: 1\n{key}: {{{SUB}: 1}}\n', tmp)
        if (SUB, key) in sub:
            keys |= {f'{key}.{k}' for k in sub[(SUB, key)]}
            continue
        # An open map of mappings (retry_presets): the fields of an entry.
        sub, _ = refusals(binary, f'{PROBE}: 1\n{key}: {{p: {{{SUB}: 1}}}}\n', tmp)
        nested = [v for (k, what), v in sub.items() if k == SUB and what.startswith(key)]
        if nested:
            keys |= {f'{key}.<name>.{k}' for k in nested[0]}
        else:
            keys.add(key)
    return keys


def documented_keys(doc, heading):
    keys, inside = set(), False
    with open(doc, encoding='utf-8') as f:
        for line in f:
            if line.startswith('#'):
                inside = line.strip() == heading
                continue
            m = re.match(r'^\|\s*`([^`]+)`\s*\|', line)
            if inside and m:
                keys.add(m.group(1))
    return keys


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    bindir = argv[1]
    doc = argv[2] if len(argv) > 2 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), '..', '..', 'docs', 'operations.md')
    problems = 0
    with tempfile.TemporaryDirectory() as tmp:
        for binary, what, heading in [('orchestrator', 'orchestrator config', '### orchestrator.yaml'),
                                      ('edge-agent', 'edge-agent config', '### edge-agent.yaml')]:
            accepted = accepted_keys(os.path.join(bindir, binary), what, tmp)
            documented = documented_keys(doc, heading)
            if len(accepted) < 10 or len(documented) < 10:
                print(f'FAIL {binary}: found only {len(accepted)} accepted / '
                      f'{len(documented)} documented keys')
                problems += 1
            for k in sorted(accepted - documented):
                print(f'FAIL {binary}: accepts `{k}`, not in docs/operations.md ({heading})')
                problems += 1
            for k in sorted(documented - accepted):
                print(f'FAIL {binary}: docs/operations.md ({heading}) lists `{k}`, which it refuses')
                problems += 1
            print(f'{binary}: {len(accepted)} keys accepted, {len(documented)} documented')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
