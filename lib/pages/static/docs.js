// Starts Swagger UI on this service's own description. A file, not an inline script, so the page's
// Content-Security-Policy can refuse every inline script. URLs are relative to /docs, so the page
// also works behind a proxy that serves the service under a path prefix.
/* global SwaggerUIBundle */

window.ui = SwaggerUIBundle({
  url: 'openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  // The public validator badge would send the description to a third party.
  validatorUrl: null,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
})
