/**
 * The API reference page's script (served at /api/docs): Swagger UI rendering the document named by
 * the page's `data-document`. Swagger UI's validator badge is off: it would send the document to a
 * third-party service, and the page must work offline.
 */
import 'swagger-ui-dist/swagger-ui.css';

import SwaggerUIBundle from 'swagger-ui-dist/swagger-ui-bundle.js';

const root = document.getElementById('api-reference');
const url = root?.dataset.document;
if (root !== null && url !== undefined) {
  SwaggerUIBundle({ url, domNode: root, validatorUrl: null, deepLinking: true, docExpansion: 'list', defaultModelsExpandDepth: 0 });
}
