#!/usr/bin/env -S node --no-memory-reducer
// svc: the command table of lib/process/commands.ts, which declares every command, what each
// prints and its exit statuses, run on this process's arguments, environment and output.
//
// --no-memory-reducer: V8's memory reducer starts a "reduce memory" mark-compact once no
// mark-compact has run for 100 s, however busy the process. svc under steady load promotes little,
// so it went through one every ~105 s: a 24 ms pause, then a young generation shrunk to its floor
// and three to four times the scavenges for the next ~20 s (500 models, 8 connections, Node 20).
// Without it, the heap is collected as it fills and is not shrunk after a peak. Node refuses the
// flag in NODE_OPTIONS, so it rides on this line (`env -S`, coreutils 8.30+).
import { runSvc } from '../lib/process/commands.js'

const write =
  (stream: NodeJS.WriteStream) =>
  (text: string): void =>
    void stream.write(text)

process.exitCode = await runSvc(process.argv.slice(2), { env: process.env, stdout: write(process.stdout), stderr: write(process.stderr) })
