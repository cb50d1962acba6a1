// PostgreSQL check: the SSLRequest handshake. Every PostgreSQL server answers it with a single byte
// before any authentication, so the check needs no credentials and proves a PostgreSQL server is
// listening, where a bare TCP connect would also pass for a TCP load balancer with no backend
// behind it or an unrelated service on the port.
import { OK, tcpCheck, UNEXPECTED_REPLY, type Check, type Outcome, type Target } from './check.js'

// Int32 length 8, Int32 code 80877103 (1234 << 16 | 5679); protocol docs, "SSLRequest".
const SSL_REQUEST = Buffer.from([0, 0, 0, 8, 0x04, 0xd2, 0x16, 0x2f])
const SSL_YES = 0x53 // 'S'
const SSL_NO = 0x4e // 'N'

/**
 * Ok on exactly one byte, 'S' (TLS available) or 'N' (not). More bytes are not a PostgreSQL
 * answer: a server must send nothing after that byte until the client speaks (CVE-2021-23214 is
 * what happens when a client believes otherwise). The socket is destroyed at once: no TLS, no startup.
 */
const judge = (received: Buffer): Outcome => (received.length === 1 && (received[0] === SSL_YES || received[0] === SSL_NO) ? OK : UNEXPECTED_REPLY)

export const postgresCheck = (target: Target, timeoutMs: number): Check => tcpCheck(target, timeoutMs, { request: SSL_REQUEST, judge })
