#!/usr/bin/env node
// svc: the command table of lib/process/commands.ts, which declares every command, what each
// prints and its exit statuses, run on this process's arguments, environment and output.
//
// A plain `#!` line: one word after `env`, which every `env` takes (BusyBox's, coreutils' before
// 8.30, which have no `-S`). So svc runs with Node's own flags, V8's memory reducer on: after a peak
// the heap shrinks back within about 100 s. `--no-memory-reducer` removes its "reduce memory"
// mark-compact under steady load (a 24–28 ms pause about every 100 s at 500 models), and keeps every
// peak as resting RSS; the bench's figures for both and how to choose: README.md, Running. Node
// refuses it in NODE_OPTIONS, so it goes on `node`'s command line before this file.
import { runSvc } from '../lib/process/commands.js'

const write =
  (stream: NodeJS.WriteStream) =>
  (text: string): void =>
    void stream.write(text)

process.exitCode = await runSvc(process.argv.slice(2), { env: process.env, stdout: write(process.stdout), stderr: write(process.stderr) })
