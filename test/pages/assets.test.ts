// Where the pages' files are found: from source and from a build, and Swagger UI's package.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import t from 'tap'
import { DEMO_FILES, DOCS_FILES, defaultSources, readFiles, staticDir, SWAGGER_UI_FILES, swaggerUiDir } from '../../lib/pages/assets.js'

const ROOT = join(import.meta.dirname, '..', '..')

t.test('the static folder is found from the sources and from the build', async (t) => {
  const expected = join(ROOT, 'lib', 'pages', 'static')
  t.equal(staticDir(pathToFileURL(join(ROOT, 'lib', 'pages', 'assets.ts'))), expected)
  t.equal(staticDir(pathToFileURL(join(ROOT, 'dist', 'lib', 'pages', 'assets.js'))), expected, 'tsc does not copy the files: a build reads the sources')
  t.throws(() => staticDir(new URL('file:///nowhere/lib/pages/assets.js')), /package.json of svc not found above \/nowhere\/lib\/pages\/assets.js/)
  t.same(defaultSources(), { staticDir: expected, swaggerUiDir: swaggerUiDir() })
})

t.test('every file the pages name exists, Swagger UI from its installed package', async (t) => {
  const { staticDir: own, swaggerUiDir: swagger } = defaultSources()
  t.match(swagger, /node_modules[/\\]swagger-ui-dist$/)
  for (const name of ['docs.html', 'demo.html', ...DOCS_FILES, ...DEMO_FILES]) t.ok(existsSync(join(own, name)), name)
  const files = readFiles(swagger, SWAGGER_UI_FILES)
  t.same([...files.keys()], ['swagger-ui-bundle.js', 'swagger-ui.css'])
  t.match(files.get('swagger-ui-bundle.js'), /SwaggerUIBundle/)
  t.throws(() => readFiles(own, ['missing.js']), /ENOENT.*missing\.js/)
})
