// GET /docs (Swagger UI over /openapi.json), GET /demo (the service watching itself), and their
// files under /docs/{asset} and /demo/{asset}: one template each, so the HTTP metrics get one
// `endpoint` label per folder whatever names clients try. Everything is read at start-up.
import { HEADERS, problem, problemExample, type ParameterDoc, type ResponseDoc, type RouteDoc } from '../core/route-doc.js'
import { route, type RouteDef } from '../core/pipeline.js'
import { DEMO_FILES, DOCS_FILES, defaultSources, readFiles, readText, SWAGGER_UI_FILES, type PageSources } from './assets.js'
import { contentType, serveFolder, serveText } from './static-file.js'

/**
 * Scripts and styles from this origin only, and no inline script (Swagger UI's initializer is a
 * served file, docs.js). Swagger UI sets element styles from script (CSSOM, which style-src does
 * not govern) and draws a few icons from data: URLs in its stylesheet, hence `img-src data:`;
 * nothing needs 'unsafe-inline' or 'unsafe-eval' (the browser tests fail on any violation).
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; " +
  "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
/** The demo draws its chart as SVG elements and takes nothing from elsewhere. */
export const DEMO_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

const IF_NONE_MATCH: ParameterDoc = {
  name: 'If-None-Match',
  in: 'header',
  description: 'The ETag of a copy already held: 304 without a body while it is current',
  schema: { type: 'string' },
}

const NOT_MODIFIED: ResponseDoc = {
  description: 'The copy held (If-None-Match) is current',
  headers: { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl },
}

const page = (description: string): ResponseDoc => ({
  description,
  headers: { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl, 'Content-Security-Policy': HEADERS.csp },
  content: { 'text/html; charset=utf-8': { schema: { type: 'string' } } },
})

const assetDoc = (folder: '/docs' | '/demo', names: readonly string[], operationId: string, summary: string, example: string): RouteDoc => ({
  operationId,
  summary,
  description: `One of a fixed list of files: ${names.map((n) => `\`${n}\``).join(', ')}. Any other name is 404.`,
  tags: ['pages'],
  parameters: [
    { name: 'asset', in: 'path', description: 'The file name', required: true, schema: { type: 'string', enum: [...names] }, example },
    IF_NONE_MATCH,
  ],
  responses: {
    '200': {
      description: 'The file, typed by its extension',
      headers: { ETag: HEADERS.etag, 'Cache-Control': HEADERS.cacheControl },
      content: Object.fromEntries([...new Set(names.map(contentType))].map((type) => [type, { schema: { type: 'string' } }])),
    },
    '304': NOT_MODIFIED,
    '404': problem('No file of that name', {
      unknown: problemExample('A name not on the list', 404, 'ASSET_NOT_FOUND', `No such file under ${folder}`, `${folder}/passwd`),
    }),
  },
})

const DOCS_ASSETS = [...SWAGGER_UI_FILES, ...DOCS_FILES]

export const DOCS_DOC: RouteDoc = {
  operationId: 'getDocs',
  summary: 'Interactive API docs',
  description: 'Swagger UI over /openapi.json, served from this process (no CDN): read every operation and try it out.',
  tags: ['pages'],
  parameters: [IF_NONE_MATCH],
  responses: { '200': page('The Swagger UI page'), '304': NOT_MODIFIED },
}

export const DOCS_ASSET_DOC: RouteDoc = assetDoc('/docs', DOCS_ASSETS, 'getDocsAsset', 'A file of the API docs page', 'swagger-ui.css')

export const DEMO_DOC: RouteDoc = {
  operationId: 'getDemo',
  summary: 'Live demo page',
  description:
    'The service observing itself: a live chart of the /api/insights stream, the BTC rate, the models with their readiness and drift, ' +
    'and the health of each component. No framework; readable on a phone.',
  tags: ['pages'],
  parameters: [IF_NONE_MATCH],
  responses: { '200': page('The demo page'), '304': NOT_MODIFIED },
}

export const DEMO_ASSET_DOC: RouteDoc = assetDoc('/demo', DEMO_FILES, 'getDemoAsset', 'A file of the demo page', 'demo.js')

const HTML = contentType('docs.html')

/** The four page routes; `sources` says where the files are (tests point it elsewhere). */
export const pageRoutes = (sources: PageSources = defaultSources()): RouteDef[] => {
  const { staticDir } = sources
  const docsHtml = readText(staticDir, 'docs.html')
  const demoHtml = readText(staticDir, 'demo.html')
  const docsOwn = readFiles(staticDir, DOCS_FILES)
  const demoFiles = readFiles(staticDir, DEMO_FILES)
  const docsFiles = new Map([...readFiles(sources.swaggerUiDir, SWAGGER_UI_FILES), ...docsOwn])
  return [
    { method: 'GET', path: '/docs', handler: serveText(docsHtml, HTML, { 'content-security-policy': DOCS_CSP }), doc: DOCS_DOC },
    route({ method: 'GET', path: '/docs/{asset}', handler: serveFolder(docsFiles, '/docs'), doc: DOCS_ASSET_DOC }),
    { method: 'GET', path: '/demo', handler: serveText(demoHtml, HTML, { 'content-security-policy': DEMO_CSP }), doc: DEMO_DOC },
    route({ method: 'GET', path: '/demo/{asset}', handler: serveFolder(demoFiles, '/demo'), doc: DEMO_ASSET_DOC }),
  ]
}
