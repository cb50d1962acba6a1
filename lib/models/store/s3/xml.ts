// The two XML documents the store reads from S3: a ListObjectsV2 page and an error. Both are flat
// and machine-written, so a few patterns read them: no DTDs, no namespaces prefixes, no CDATA in
// what S3, MinIO, Ceph or moto send. Text is unescaped for the five predefined entities and
// character references, which is all XML 1.0 has without a DTD.
import { StoreError } from '../error.js'

/** One object of a listing: its key, its ETag (quoted), size and last modification. */
export type ListedObject = Readonly<{ key: string; etag: string; size: number; mtimeMs: number }>

export type ListPage = Readonly<{ objects: readonly ListedObject[]; nextToken: string | undefined }>

const ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" }

/** XML text with its entity and character references replaced; an unknown reference is kept as written. */
export const unescapeXml = (text: string): string =>
  text.replace(/&(#x[0-9A-Fa-f]+|#[0-9]+|[a-z]+);/g, (whole, name: string) => {
    if (name.startsWith('#')) {
      const code = name[1] === 'x' ? Number.parseInt(name.slice(2), 16) : Number.parseInt(name.slice(1), 10)
      return code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return ENTITIES[name] ?? whole
  })

/** The text of the first `<name>` element in `xml`, unescaped; undefined when there is none. */
export const elementText = (xml: string, name: string): string | undefined => {
  const text = new RegExp(`<${name}>([^<]*)</${name}>`).exec(xml)?.[1]
  return text === undefined ? undefined : unescapeXml(text)
}

/** An error reply's `<Code>`, or undefined when the body is not S3's `<Error>` document. */
export const errorCodeOf = (xml: string): string | undefined => (xml.includes('<Error>') ? elementText(xml, 'Code') : undefined)

/** A ListObjectsV2 page; UPSTREAM_ERROR naming `what` when it is not one. */
export const parseListPage = (xml: string, what: string): ListPage => {
  const malformed = (why: string): never => {
    throw new StoreError('UPSTREAM_ERROR', `${what} answered a listing that cannot be read: ${why}`)
  }
  if (!xml.includes('<ListBucketResult')) malformed('no ListBucketResult')
  const objects: ListedObject[] = []
  for (const [, body = ''] of xml.matchAll(/<Contents>([\s\S]*?)<\/Contents>/g)) {
    const key = elementText(body, 'Key')
    const etag = elementText(body, 'ETag')
    const size = Number(elementText(body, 'Size'))
    const mtimeMs = Date.parse(elementText(body, 'LastModified') ?? '')
    if (key === undefined || etag === undefined || !Number.isSafeInteger(size) || size < 0) return malformed('an object without its Key, ETag or Size')
    objects.push({ key, etag, size, mtimeMs: Number.isNaN(mtimeMs) ? 0 : mtimeMs })
  }
  const isTruncated = elementText(xml, 'IsTruncated') === 'true'
  const nextToken = isTruncated ? elementText(xml, 'NextContinuationToken') : undefined
  if (isTruncated && (nextToken === undefined || nextToken === '')) malformed('IsTruncated without a NextContinuationToken')
  return { objects, nextToken }
}
