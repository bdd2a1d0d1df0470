/** The part of swagger-ui-dist's browser bundle the API reference page uses (the package ships no types). */
declare module 'swagger-ui-dist/swagger-ui-bundle.js' {
  interface SwaggerUiOptions {
    readonly url: string;
    readonly domNode: HTMLElement;
    readonly validatorUrl: string | null;
    readonly deepLinking?: boolean;
    readonly docExpansion?: 'list' | 'full' | 'none';
    readonly defaultModelsExpandDepth?: number;
  }
  const SwaggerUIBundle: (options: SwaggerUiOptions) => unknown;
  export default SwaggerUIBundle;
}
