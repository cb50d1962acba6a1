// Model artifacts in an S3-compatible bucket (AWS S3, MinIO, Ceph RGW, R2), laid out as a
// directory store is: `<prefix><model>/manifest.json` and `<prefix><model>/<version>/…`.
//
// - A pass's `scan` is one recursive ListObjectsV2 of the prefix, every page read: the models are
//   the keys `<model>/manifest.json`, and every file's stat (ETag, size) comes from the listing, so an
//   unchanged pass costs ⌈keys / 1000⌉ requests, not a HEAD per file. The prefix always ends with
//   `/` and keys are split into segments, so model `model` never takes the keys of `model-v2`.
// - `read` is a GET, `stat` outside a pass a HEAD, `write` a PUT with If-Match or If-None-Match: *,
//   which S3 has honoured since 2024-11 (MinIO and Ceph too); 412 is PRECONDITION_FAILED.
// - The payload's SHA-256 is signed (x-amz-content-sha256), so the server refuses an upload whose
//   bytes changed on the way.
// Failures, retries and the credentials' refresh are the client's (./client.ts); messages name the
// bucket and key, never a credential.
import { preconditionFailure, StoreError } from '../error.js'
import { checkPath, isSegment } from '../path.js'
import type { Store, StoreScan, StoreStat, WriteCondition } from '../store.js'
import type { S3Client } from './client.js'
import { type ListedObject, parseListPage } from './xml.js'

export type S3StoreOptions = Readonly<{ bucket: string; prefix: string; client: S3Client; maxBytes: number }>

/** Keys a listing page holds at most: S3's own cap, asked for explicitly since some servers default lower. */
export const PAGE_KEYS = 1000
const LISTING_BYTES = 8 * 1024 * 1024
const MANIFEST = 'manifest.json'

const contentType = (path: string): string => (path.endsWith('.json') ? 'application/json' : 'application/octet-stream')

/** A stat from a reply's headers: its ETag, a size, and a time (0 when it gives none, as for an HTTP store without Last-Modified). */
const statOf = (etag: string | undefined, size: number, time: string | undefined, what: string): StoreStat => {
  if (etag === undefined) throw new StoreError('UPSTREAM_ERROR', `${what} answered without an ETag`)
  if (!Number.isSafeInteger(size) || size < 0) throw new StoreError('UPSTREAM_ERROR', `${what} answered without a Content-Length`)
  const mtimeMs = Date.parse(String(time))
  return { size, mtimeMs: Number.isNaN(mtimeMs) ? 0 : mtimeMs, etag }
}

const header = (value: string | string[] | undefined): string | undefined => (typeof value === 'string' ? value : undefined)

/** Every object under the prefix, every page read. */
const listAll = async (client: S3Client, prefix: string, description: string): Promise<ListedObject[]> => {
  const objects: ListedObject[] = []
  let token: string | undefined
  do {
    const query: Array<readonly [string, string]> = [
      ['list-type', '2'],
      ['max-keys', String(PAGE_KEYS)],
      ['prefix', prefix],
    ]
    if (token !== undefined) query.push(['continuation-token', token])
    const request = { method: 'GET', key: undefined, query, maxBytes: LISTING_BYTES, what: `ListObjectsV2 ${description}` } as const
    const reply = await client.send(request)
    if (reply.status !== 200) throw client.failure(request, reply)
    const page = parseListPage(reply.body.toString('utf8'), request.what)
    objects.push(...page.objects)
    token = page.nextToken
  } while (token !== undefined)
  return objects
}

export const createS3Store = ({ bucket, prefix, client, maxBytes }: S3StoreOptions): Store => {
  const description = `s3://${bucket}/${prefix}`
  const keyOf = (path: string): string => `${prefix}${checkPath(path).join('/')}`

  const scan = async (): Promise<StoreScan> => {
    const stats = new Map<string, StoreStat>()
    const models: string[] = []
    for (const { key, etag, size, mtimeMs } of await listAll(client, prefix, description)) {
      const path = key.slice(prefix.length)
      const segments = path.split('/')
      // Keys no store path can name (`a//b`, a folder marker ending in `/`) are not artifacts.
      if (!key.startsWith(prefix) || !segments.every(isSegment)) continue
      stats.set(path, { size, mtimeMs, etag })
      const [model, file] = segments
      if (segments.length === 2 && file === MANIFEST && model !== undefined) models.push(model)
    }
    return {
      models: models.sort(),
      stat: async (path) => {
        checkPath(path)
        const stat = stats.get(path)
        if (stat === undefined) throw new StoreError('NOT_FOUND', `${description}${path} not found (not in the listing)`)
        return stat
      },
    }
  }

  const read = async (path: string): Promise<Buffer> => {
    const request = { method: 'GET', key: keyOf(path), maxBytes, what: `GET ${description}${path}` } as const
    const reply = await client.send(request)
    if (reply.status !== 200) throw client.failure(request, reply)
    return reply.body
  }

  const stat = async (path: string): Promise<StoreStat> => {
    const request = { method: 'HEAD', key: keyOf(path), maxBytes: 0, what: `HEAD ${description}${path}` } as const
    const reply = await client.send(request)
    if (reply.status !== 200) throw client.failure(request, reply)
    return statOf(header(reply.headers.etag), Number(reply.headers['content-length']), header(reply.headers['last-modified']), request.what)
  }

  const write = async (path: string, bytes: Buffer, condition: WriteCondition): Promise<StoreStat> => {
    const conditional = 'ifMatch' in condition ? { 'if-match': condition.ifMatch } : { 'if-none-match': '*' }
    const request = {
      method: 'PUT',
      key: keyOf(path),
      headers: { 'content-type': contentType(path), ...conditional },
      body: bytes,
      maxBytes: 0,
      what: `PUT ${description}${path}`,
    } as const
    const reply = await client.send(request)
    if (reply.status === 200) return statOf(header(reply.headers.etag), bytes.length, header(reply.headers.date), request.what)
    const failure = client.failure(request, reply)
    // S3 answers If-Match on a key that is gone with 404 NoSuchKey: the condition does not hold.
    const isGone = failure.code === 'NOT_FOUND' && 'ifMatch' in condition
    if (!isGone && failure.code !== 'PRECONDITION_FAILED') throw failure
    const why = isGone || !('ifMatch' in condition) ? preconditionFailure(condition, undefined) : `changed since its etag was ${condition.ifMatch}`
    throw new StoreError('PRECONDITION_FAILED', `${description}${path} ${why}`, { cause: failure })
  }

  return {
    description,
    list: async () => (await scan()).models,
    read,
    stat,
    write,
    scan,
  }
}
