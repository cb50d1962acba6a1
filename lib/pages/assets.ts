// Where the pages' files come from, read once at start-up: the service's own (lib/pages/static,
// shipped with the package) and Swagger UI's (the swagger-ui-dist package; never a CDN, since the
// service may run without a route to the internet).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { packageRoot } from '../config/package-root.js'

/**
 * The Swagger UI files /docs uses, and the only ones /docs/{asset} serves of that package. The
 * standalone preset (a top bar to load other documents) and the source maps are left out.
 */
export const SWAGGER_UI_FILES = ['swagger-ui-bundle.js', 'swagger-ui.css'] as const

/** The service's own files under /docs/{asset} and /demo/{asset}. */
export const DOCS_FILES = ['docs.js', 'docs.css', 'favicon.svg'] as const
export const DEMO_FILES = ['demo.js', 'demo.css', 'favicon.svg'] as const

/** lib/pages/static under svc's package root (lib/config/package-root.ts): tsc does not copy these files, so a build reads the sources. */
export const staticDir = (from: URL): string => join(packageRoot(from), 'lib', 'pages', 'static')

/** The installed swagger-ui-dist, found as Node resolves any dependency. */
export const swaggerUiDir = (): string => dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'))

/** A file of a folder, as text; a missing one fails start-up, naming it. */
export const readText = (dir: string, name: string): string => readFileSync(join(dir, name), 'utf8')

/** The named files of a folder, as text, as readText reads each. */
export const readFiles = (dir: string, names: readonly string[]): Map<string, string> => new Map(names.map((name) => [name, readText(dir, name)]))

export type PageSources = Readonly<{
  /** The service's own page files. */
  staticDir: string
  /** The swagger-ui-dist package. */
  swaggerUiDir: string
}>

export const defaultSources = (): PageSources => ({ staticDir: staticDir(new URL(import.meta.url)), swaggerUiDir: swaggerUiDir() })
