import t from 'tap'
import { errorMessage } from '../../lib/core/errors.js'
import { isObject, parseJson } from '../../lib/core/json.js'
import { decodeUtf8 } from '../../lib/core/utf8.js'

t.test('parseJson reads a document from its UTF-8 bytes or its text', async (t) => {
  t.same(parseJson(Buffer.from('{"a":[1,"é"]}')), { a: [1, 'é'] })
  t.same(parseJson('{"a":1}'), { a: 1 })
  t.same(parseJson(new Uint8Array([0xef, 0xbb, 0xbf, 0x5b, 0x5d])), [], 'a leading byte-order mark is dropped')
})

t.test('parseJson refuses bytes that are not UTF-8, and text that is not JSON, saying which', async (t) => {
  const notUtf8 = t.throws(() => parseJson(Buffer.from([0x7b, 0xff, 0x7d])))
  t.type(notUtf8, TypeError)
  t.equal(errorMessage(notUtf8), 'The encoded data was not valid for encoding utf-8')
  t.type(
    t.throws(() => parseJson('{bad')),
    SyntaxError,
  )
  // A string is taken as it is: only bytes are decoded.
  t.equal(parseJson('"\uFFFD"'), '\uFFFD')
})

t.test('isObject: a JSON object, not null, not an array', async (t) => {
  t.ok(isObject({}))
  t.ok(isObject({ a: 1 }))
  for (const value of [null, [], [1], 'x', 1, true, undefined]) t.notOk(isObject(value), JSON.stringify(value) ?? 'undefined')
})

t.test('decodeUtf8 drops a leading mark from a whole document and keeps it in a piece of one', async (t) => {
  const bytes = Buffer.from('\uFEFFa,b\n')
  t.equal(decodeUtf8(bytes), 'a,b\n')
  t.equal(decodeUtf8(bytes, true), '\uFEFFa,b\n')
  t.throws(() => decodeUtf8(Buffer.from([0xc3])), TypeError, 'a sequence cut short is refused, never U+FFFD')
  t.throws(() => decodeUtf8(Buffer.from([0xc3]), true), TypeError)
  t.equal(decodeUtf8(Buffer.from([0xc3, 0xa9])), 'é', 'no state is kept between calls')
})
