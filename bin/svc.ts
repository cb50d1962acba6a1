#!/usr/bin/env node
// svc: the command table of lib/process/commands.ts, which declares every command, what each
// prints and its exit statuses, run on this process's arguments, environment and output.
import { runSvc } from '../lib/process/commands.js'

const write =
  (stream: NodeJS.WriteStream) =>
  (text: string): void =>
    void stream.write(text)

process.exitCode = await runSvc(process.argv.slice(2), { env: process.env, stdout: write(process.stdout), stderr: write(process.stderr) })
