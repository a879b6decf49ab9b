import type { TaskRecord } from "../../src/tasks/record/record.js";

/** A task record as the store keeps one — working, nothing asked, nothing journaled — with `over` on top: the fixture of tests of the record's pure parts. */
export function taskRecord(over: Partial<TaskRecord> = {}): TaskRecord {
  return {
    v: 1,
    id: "T",
    rev: 0,
    tool: "x",
    args: {},
    call: "c",
    caps: {},
    status: "working",
    created: 0,
    updated: 0,
    ttlMs: 60_000,
    pollMs: 500,
    journal: [],
    outstanding: {},
    waiting: [],
    answers: {},
    partial: {},
    used: [],
    ...over,
  };
}
