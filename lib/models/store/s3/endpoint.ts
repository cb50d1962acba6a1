// Where a bucket's requests go. A server named by SVC_S3_ENDPOINT (MinIO, Ceph RGW, R2, a test's)
// is addressed path-style, `<endpoint>/<bucket>/<key>`, since those servers need no DNS entry per
// bucket. AWS is addressed virtual-hosted, `<bucket>.s3.<region>.amazonaws.com/<key>`, as AWS
// prefers, except for a bucket with a dot in its name: its host would not match the wildcard TLS
// certificate, so it goes path-style to `s3.<region>.amazonaws.com`.
import type { S3Config } from '../../../config/config.js'

export type S3Endpoint = Readonly<{
  /** The scheme, host and port requests go to. */
  origin: URL
  /** The Host header, as signed. */
  host: string
  /** The path before a key, unencoded, ending with `/`: `/` virtual-hosted, `/<bucket>/` path-style (after any base path of the endpoint's). */
  base: string
  region: string
}>

export const s3Endpoint = (bucket: string, { endpoint, region }: Pick<S3Config, 'endpoint' | 'region'>): S3Endpoint => {
  if (endpoint !== undefined) {
    const base = endpoint.pathname.endsWith('/') ? endpoint.pathname : `${endpoint.pathname}/`
    return { origin: new URL(endpoint.origin), host: endpoint.host, base: `${decodeURIComponent(base)}${bucket}/`, region }
  }
  const isVirtual = !bucket.includes('.')
  const host = isVirtual ? `${bucket}.s3.${region}.amazonaws.com` : `s3.${region}.amazonaws.com`
  return { origin: new URL(`https://${host}`), host, base: isVirtual ? '/' : `/${bucket}/`, region }
}
