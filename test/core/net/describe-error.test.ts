import t from 'tap'
import { CONNECTION_CLOSED, describeError, rootCause } from '../../../lib/core/net/describe-error.js'

const withCode = (code: string): NodeJS.ErrnoException => Object.assign(new Error(`connect ${code} 10.0.0.1:5432`), { code })

t.test('describeError spells out known network causes and never shows the address', async (t) => {
  t.equal(describeError(withCode('ECONNREFUSED')), 'connection refused')
  t.equal(describeError(withCode('ENOTFOUND')), 'host not found')
  t.equal(describeError(withCode('EAI_AGAIN')), 'host not found')
  t.equal(describeError(withCode('ECONNRESET')), CONNECTION_CLOSED)
  t.equal(describeError(withCode('EPIPE')), CONNECTION_CLOSED)
})

t.test('describeError falls back to the code, then to the message, then to the value', async (t) => {
  t.equal(describeError(withCode('EHOSTUNREACH')), 'EHOSTUNREACH')
  t.equal(describeError(new Error('certificate has expired')), 'certificate has expired')
  t.equal(describeError('a thrown string'), 'a thrown string')
})

t.test('rootCause finds what a fetch failure wraps', async (t) => {
  const cause = withCode('ECONNREFUSED')
  t.equal(rootCause(new TypeError('fetch failed', { cause })), cause)
  const plain = new Error('no cause')
  t.equal(rootCause(plain), plain)
  t.equal(rootCause('text'), 'text')
})
