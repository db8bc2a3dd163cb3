// adnet's API reference on /docs: Swagger UI, served from adnet itself, reading this server's /openapi.json.
// Nothing is fetched from anywhere else (no validator badge), so the page works offline and under adnet's CSP.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("swagger-ui");
    window.ui = window.SwaggerUIBundle({
      url: root.dataset.openapiUrl,
      domNode: root,
      // Without deep links, an operation's path is text inside its summary button, not a link nested in a button
      // (axe: nested-interactive).
      deepLinking: false,
      validatorUrl: null,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      presets: [window.SwaggerUIBundle.presets.apis]
    });
  });
})();
