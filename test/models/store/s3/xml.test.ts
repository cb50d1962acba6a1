// The XML the S3 store reads: listing pages and error documents, as S3, MinIO and moto write them.
import t from 'tap'
import { elementText, errorCodeOf, parseListPage, unescapeXml } from '../../../../lib/models/store/s3/xml.js'

const page = (contents: string, tail = '<IsTruncated>false</IsTruncated>'): string =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>models-bk</Name><Prefix>prod/</Prefix><KeyCount>2</KeyCount><MaxKeys>1000</MaxKeys>${tail}${contents}</ListBucketResult>`

const object = (key: string, etag = '&quot;5d41402abc4b2a76b9719d911017c592&quot;', size = '5', modified = '2026-12-07T18:35:36.000Z'): string =>
  `<Contents><Key>${key}</Key><LastModified>${modified}</LastModified><ETag>${etag}</ETag><Size>${size}</Size><StorageClass>STANDARD</StorageClass></Contents>`

t.test('unescapeXml replaces the predefined entities and character references, and keeps unknown ones', async (t) => {
  t.equal(unescapeXml('a &amp; b &lt;c&gt; &quot;d&quot; &apos;e&apos; &#65;&#x42;&#x1F600;'), 'a & b <c> "d" \'e\' AB😀')
  t.equal(unescapeXml('&nbsp; &#x110000; &amp;amp;'), '&nbsp; &#x110000; &amp;')
})

t.test('elementText reads the first element, or undefined', async (t) => {
  t.equal(elementText('<A><B>x&amp;y</B><B>z</B></A>', 'B'), 'x&y')
  t.equal(elementText('<A><B/></A>', 'B'), undefined)
  t.equal(elementText('<A><B></B></A>', 'B'), '')
})

t.test('a page: each object with its quoted ETag, size and time; the token only when truncated', async (t) => {
  const listed = parseListPage(
    page(object('prod/iris/manifest.json') + object('prod/iris/1/model.json', '"abc"', '1234', 'bad date')),
    'ListObjectsV2 s3://models-bk/prod/',
  )
  t.same(listed, {
    objects: [
      { key: 'prod/iris/manifest.json', etag: '"5d41402abc4b2a76b9719d911017c592"', size: 5, mtimeMs: Date.parse('2026-12-07T18:35:36.000Z') },
      { key: 'prod/iris/1/model.json', etag: '"abc"', size: 1234, mtimeMs: 0 },
    ],
    nextToken: undefined,
  })
  t.same(
    parseListPage(page('', '<IsTruncated>true</IsTruncated><NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>'), 'x')
      .nextToken,
    '1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=',
  )
  t.same(parseListPage(page(object('a&amp;b.json')), 'x').objects[0]?.key, 'a&b.json')
  t.same(parseListPage(page(''), 'x'), { objects: [], nextToken: undefined })
})

t.test('what is not a listing is UPSTREAM_ERROR naming the request', async (t) => {
  const what = 'ListObjectsV2 s3://models-bk/prod/'
  t.throws(() => parseListPage('<html>proxy error</html>', what), {
    code: 'UPSTREAM_ERROR',
    message: `${what} answered a listing that cannot be read: no ListBucketResult`,
  })
  t.throws(() => parseListPage(page('<Contents><Key>k</Key></Contents>'), what), { message: /an object without its Key, ETag or Size/ })
  t.throws(() => parseListPage(page(object('k', '"e"', '-1')), what), { message: /without its Key, ETag or Size/ })
  t.throws(() => parseListPage(page('', '<IsTruncated>true</IsTruncated>'), what), { message: /IsTruncated without a NextContinuationToken/ })
})

t.test("errorCodeOf reads an Error document's Code, and nothing else", async (t) => {
  t.equal(
    errorCodeOf('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>'),
    'SlowDown',
  )
  t.equal(errorCodeOf('<ListBucketResult><Code>x</Code></ListBucketResult>'), undefined)
  t.equal(errorCodeOf('<Error><Message>no code</Message></Error>'), undefined)
})
