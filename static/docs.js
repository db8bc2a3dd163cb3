// adnet's API reference on /docs: Swagger UI, served from adnet itself, reading this server's /openapi.json.
// Nothing is fetched from anywhere else (no validator badge), so the page works offline and under adnet's CSP.
(function () {
  "use strict";

  document.addEventListener("DOMContentLoaded", function () {
    var root = document.getElementById("swagger-ui");
    window.ui = window.SwaggerUIBundle({
      url: root.dataset.openapiUrl,
      domNode: root,
      deepLinking: true,
      validatorUrl: null,
      docExpansion: "list",
      defaultModelsExpandDepth: 0,
      presets: [window.SwaggerUIBundle.presets.apis]
    });
  });
})();
