// The closed sets some variables choose from, and their types. The lowest module of the
// configuration: the modules acting on a choice (the logger, the tracer, the rate client) import
// these without importing the configuration reader.

export const ENVIRONMENTS = ['dev', 'stage', 'prod'] as const
export type Environment = (typeof ENVIRONMENTS)[number]

export const LOG_LEVELS = ['debug', 'info', 'warning', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export const LOG_FORMATS = ['json', 'console'] as const
export type LogFormat = (typeof LOG_FORMATS)[number]

export const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio'] as const
export type SamplerName = (typeof SAMPLERS)[number]

export const RATE_PROVIDERS = ['coingecko', 'coinbase'] as const
export type RateProviderName = (typeof RATE_PROVIDERS)[number]
