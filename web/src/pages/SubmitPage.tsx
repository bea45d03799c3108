// Submit a task file (docs/task-file.md) from the browser: typed or loaded
// from a file, checked with a dry run, then submitted. A refused file's
// problems are shown against its lines; clicking one puts the cursor there.

import { useRef, useState } from 'preact/hooks';
import { Api, ApiError } from '../api';
import { ErrorBox, NeedsRole } from '../components/common';
import { TaskHref } from '../router';
import type { Problem, SubmitTasksResponse } from '../types';
import { useCan } from '../whoami';

const kDraftKey = 'apollo.submit.draft';

const kExample = `# A three-step DAG: b after a, c after b.
tasks:
  - task_id: example-a
    intent: noop
    target_selector: {type: label, key: role, value: worker}
    timeout: 30
  - task_id: example-b
    intent: noop
    target_selector: {type: label, key: role, value: worker}
    timeout: 30
    depends_on: [example-a]
  - task_id: example-c
    intent: noop
    target_selector: {type: label, key: role, value: worker}
    timeout: 30
    depends_on: [example-b]
`;

interface Outcome {
  dryRun: boolean;
  resp: SubmitTasksResponse;
}

function Annotated({ text, problems, onPick }: { text: string; problems: Problem[]; onPick: (p: Problem) => void }) {
  const lines = text.split('\n');
  const at = new Map<number, Problem[]>();
  const whole: Problem[] = [];
  for (const p of problems) {
    if (p.line > 0 && p.line <= lines.length) at.set(p.line, [...(at.get(p.line) ?? []), p]);
    else whole.push(p);
  }
  return (
    <div class="annotated" data-testid="annotated">
      {whole.map((p, i) => (
        <div key={`w${i}`} class="problem whole" data-testid="problem">
          {p.task_index !== undefined ? `task ${p.task_index + 1}: ` : ''}
          {p.message}
        </div>
      ))}
      <ol class="src">
        {lines.map((l, i) => {
          const here = at.get(i + 1);
          return (
            <li key={i} class={here ? 'bad' : ''} data-line={i + 1}>
              <span class="ln" aria-hidden="true">
                {i + 1}
              </span>
              <code>{l || ' '}</code>
              {here?.map((p, j) => (
                <button type="button" key={j} class="problem" data-testid="problem" data-line={p.line} onClick={() => onPick(p)}>
                  <span aria-hidden="true">{' '.repeat(Math.max(0, p.column - 1))}^ </span>
                  line {p.line}, column {p.column}: {p.message}
                </button>
              ))}
            </li>
          );
        })}
      </ol>
    </div>
  );
}

export function SubmitPage() {
  const [text, setText] = useState(() => localStorage.getItem(kDraftKey) ?? '');
  const [fileName, setFileName] = useState('');
  const [force, setForce] = useState(false);
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [error, setError] = useState<unknown>(null);
  // The text the problems are about (the textarea may have changed since).
  const [checked, setChecked] = useState('');
  const area = useRef<HTMLTextAreaElement>(null);
  // Submitting, and its dry run, need an operator token.
  const can = useCan('operator');

  const edit = (v: string) => {
    setText(v);
    try {
      localStorage.setItem(kDraftKey, v);
    } catch {
      // Storage full or off: the draft is just not kept.
    }
  };

  const send = async (dryRun: boolean) => {
    setBusy(true);
    setError(null);
    setOutcome(null);
    setChecked(text);
    try {
      const resp = await Api<SubmitTasksResponse>('api/v1/tasks', {
        method: 'POST',
        body: text,
        contentType: 'application/yaml',
        query: { dry_run: dryRun || undefined, force: force || undefined, file_name: fileName || undefined },
      });
      setOutcome({ dryRun, resp });
      if (!dryRun) edit('');
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };

  const pick = (p: Problem) => {
    const el = area.current;
    if (!el) return;
    const lines = el.value.split('\n');
    let pos = 0;
    for (let i = 0; i < p.line - 1 && i < lines.length; i++) pos += lines[i].length + 1;
    pos += Math.max(0, p.column - 1);
    el.focus();
    el.setSelectionRange(pos, pos);
    // Scroll the line into view: lines are the same height.
    const lh = parseFloat(getComputedStyle(el).lineHeight) || 18;
    el.scrollTop = Math.max(0, (p.line - 3) * lh);
  };

  const load = async (f: File | undefined) => {
    if (!f) return;
    edit(await f.text());
    setFileName(f.name);
    setOutcome(null);
    setError(null);
  };

  const problems = error instanceof ApiError ? error.problems : [];
  const lineCount = text.split('\n').length;
  return (
    <main>
      <h1>Submit a task file</h1>
      <p class="muted">
        YAML or JSON, as for <code>apollo-cli task submit --file</code>: one task, or <code>tasks:</code> with a list. The
        dry run checks the file and resolves the target nodes without storing anything.
      </p>
      <div class="submit-tools">
        <label class="button">
          Open a file…
          <input
            type="file"
            accept=".yaml,.yml,.json,text/yaml,application/json"
            class="visually-hidden"
            data-testid="file-input"
            onChange={(e) => void load((e.target as HTMLInputElement).files?.[0])}
          />
        </label>
        {fileName && <span class="muted">{fileName}</span>}
        <button type="button" onClick={() => edit(kExample)}>
          Insert an example
        </button>
        <label class="inline">
          <input type="checkbox" checked={force} onChange={(e) => setForce((e.target as HTMLInputElement).checked)} /> force
          (accept intents no matched node advertises)
        </label>
      </div>
      <label for="task-file" class="visually-hidden">
        Task file
      </label>
      <textarea
        id="task-file"
        ref={area}
        class="editor"
        spellcheck={false}
        rows={Math.min(30, Math.max(12, lineCount + 1))}
        value={text}
        onInput={(e) => edit((e.target as HTMLTextAreaElement).value)}
        placeholder={'task_id: my-task\nintent: noop\ntarget_selector: {type: label, key: role, value: worker}\ntimeout: 30'}
        data-testid="task-file"
      />
      <div class="row">
        <button
          type="button"
          disabled={busy || !text.trim() || !can.allowed}
          title={can.reason || undefined}
          aria-describedby={can.allowed ? undefined : 'submit-needs'}
          onClick={() => void send(true)}
        >
          Dry run
        </button>
        <button
          type="button"
          class="primary"
          disabled={busy || !text.trim() || !can.allowed}
          title={can.reason || undefined}
          aria-describedby={can.allowed ? undefined : 'submit-needs'}
          onClick={() => void send(false)}
        >
          Submit
        </button>
        <NeedsRole perm={can} id="submit-needs" />
        {busy && <span class="muted">Sending…</span>}
      </div>
      {error !== null && (
        <section class="result" data-testid="submit-error">
          <ErrorBox error={error} title={problems.length ? 'The file was refused, nothing was stored' : 'Submit failed'} />
          {problems.length > 0 && <Annotated text={checked} problems={problems} onPick={pick} />}
        </section>
      )}
      {outcome && (
        <section class="result ok" data-testid="submit-result" role="status">
          {outcome.dryRun ? (
            <p>
              <strong>Dry run: the file is valid.</strong> Nothing was stored.
            </p>
          ) : (
            <>
              <p>
                <strong>Submitted {outcome.resp.tasks.length} task(s).</strong>
              </p>
              <ul>
                {outcome.resp.tasks.map((t) => (
                  <li key={t.task_id}>
                    <a href={TaskHref(t.task_id)}>{t.task_id}</a>
                    {t.created ? '' : ' (already there: the same task was submitted before)'} on{' '}
                    {t.nodes.length ? t.nodes.join(', ') : 'no node'}
                  </li>
                ))}
              </ul>
            </>
          )}
          {outcome.resp.warnings.length > 0 && (
            <ul class="warnings" data-testid="warnings">
              {outcome.resp.warnings.map((w, i) => (
                <li key={i}>⚠ {w}</li>
              ))}
            </ul>
          )}
        </section>
      )}
    </main>
  );
}
