// Command lines: what node:util parseArgs refuses, as svc and its commands say it. A leaf but for
// ./errors.ts.
import { errorMessage } from './errors.js'

/**
 * parseArgs' message without Node's hint about positional arguments (`. To specify a positional
 * argument starting with a '-', place it…`): svc and its commands take none, so the hint misleads.
 */
export const argsProblem = (error: unknown): string => errorMessage(error).replace(/\. To specify a positional argument.*$/s, '')
