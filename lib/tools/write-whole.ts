// Files the CLI writes for a running svc to read (a profile, a signed artifact): written beside the
// target, then renamed over it, so a reload never reads half a file.
import { rename, rm, writeFile } from 'node:fs/promises'

/** Writes `text` to `path` whole; on failure the temporary file is removed and the error thrown as it came. */
export const writeWhole = async (path: string, text: string): Promise<void> => {
  const temporary = `${path}.${process.pid}.tmp`
  try {
    await writeFile(temporary, text)
    await rename(temporary, path)
  } catch (error: unknown) {
    await rm(temporary, { force: true, recursive: true })
    throw error
  }
}
