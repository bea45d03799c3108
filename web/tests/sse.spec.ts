// The Server-Sent Events parser the live feed reads /api/v1/stream with
// (no browser needed): events split anywhere across chunks, CRLF, comments
// (keepalives), multi-line data, events without data.
import { expect, test } from '@playwright/test';
import { SseParser, type SseEvent } from '../src/stream';

function Parse(chunks: string[]): { events: SseEvent[]; comments: string[] } {
  const events: SseEvent[] = [];
  const comments: string[] = [];
  const p = new SseParser((e) => events.push(e), (c) => comments.push(c));
  for (const c of chunks) p.Push(c);
  return { events, comments };
}

const kStream =
  ': keepalive\n\n' +
  'event: task\ndata: {"task_id":"a","status":"RUNNING"}\n\n' +
  'event: resync\ndata: {}\n\n' +
  'data: line one\ndata: line two\n\n' +
  'event: ignored-without-data\n\n' +
  'event: task\r\ndata:{"task_id":"b"}\r\nid: 7\r\n\r\n';

test('whole stream in one chunk', () => {
  const { events, comments } = Parse([kStream]);
  expect(comments).toEqual(['keepalive']);
  expect(events).toEqual([
    { event: 'task', data: '{"task_id":"a","status":"RUNNING"}', id: '' },
    { event: 'resync', data: '{}', id: '' },
    { event: 'message', data: 'line one\nline two', id: '' },
    { event: 'task', data: '{"task_id":"b"}', id: '7' },
  ]);
});

test('the same stream split at every position, and byte by byte', () => {
  const whole = Parse([kStream]).events;
  for (let i = 1; i < kStream.length; i++) {
    expect(Parse([kStream.slice(0, i), kStream.slice(i)]).events, `split at ${i}`).toEqual(whole);
  }
  expect(Parse([...kStream]).events).toEqual(whole);
});

test('an event is not emitted before its blank line', () => {
  expect(Parse(['event: task\ndata: {}\n']).events).toEqual([]);
});
