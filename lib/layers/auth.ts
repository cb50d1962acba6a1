// Bearer tokens (RFC 6750). A route declares the token it needs (`RouteDef.auth`, read here and by
// the OpenAPI document): 'api' on /api/v1/* and /v2/* (SVC_API_TOKENS), 'metrics' on /metrics
// (SVC_METRICS_TOKEN: a scraper's credential is not a client's). Other routes stay open: the probes
// answer load balancers, the pages and /openapi.json hold nothing secret. Which token a route needs
// is decided once per route at start-up.
//
// Comparison takes the same time whichever token matches or how much of it: the presented token
// and every accepted one are compared as SHA-256 digests with timingSafeEqual, all of them, every
// time. Tokens are never logged or echoed: a refusal says only that a token is missing or wrong.
import { createHash, timingSafeEqual } from 'node:crypto'
import { HttpError } from '../core/http/errors.js'
import { toProblemReply } from '../core/http/problem.js'
import type { Layer, Reply } from '../core/pipeline.js'

export type AuthOptions = Readonly<{
  /** Tokens accepted on /api/v1/* and /v2/*; empty leaves them open. */
  apiTokens: readonly string[]
  /** The token /metrics needs; undefined leaves it open. */
  metricsToken: string | undefined
}>

/** The realm named in WWW-Authenticate. */
export const REALM = 'svc'

const digest = (token: string): Buffer => createHash('sha256').update(token, 'utf8').digest()

const refusal = (detail: string, challenge: string): Reply =>
  Object.freeze(toProblemReply(new HttpError(401, 'UNAUTHORIZED', detail, { headers: { 'www-authenticate': challenge } })))

const MISSING = refusal('This endpoint needs a bearer token: send Authorization: Bearer <token>', `Bearer realm="${REALM}"`)
const INVALID = refusal('The bearer token is not valid', `Bearer realm="${REALM}", error="invalid_token"`)

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive), else undefined. */
export const bearerToken = (authorization: string | undefined): string | undefined => {
  if (authorization === undefined || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return undefined
  const token = authorization.slice(7).trim()
  return token === '' ? undefined : token
}

/** The layer, or undefined when no token is configured (nothing to wrap). */
export const bearerAuth = ({ apiTokens, metricsToken }: AuthOptions): Layer | undefined => {
  if (apiTokens.length === 0 && metricsToken === undefined) return undefined
  const api = apiTokens.map(digest)
  const metrics = metricsToken === undefined ? [] : [digest(metricsToken)]
  return (next, route) => {
    const accepted = route.auth === 'metrics' ? metrics : route.auth === 'api' ? api : []
    if (accepted.length === 0) return next
    return (ctx) => {
      const token = bearerToken(ctx.header('authorization'))
      if (token === undefined) return MISSING
      const presented = digest(token)
      let isMatch = false
      for (const candidate of accepted) isMatch = timingSafeEqual(presented, candidate) || isMatch
      return isMatch ? next(ctx) : INVALID
    }
  }
}
