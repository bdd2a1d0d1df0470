/** Every HTTP route of the app, from the one route list (shared/app/routes.ts); the logic lives in shared/. */
import { appRoutes } from '../shared/app/routes';
import { registration, theApp } from './_app';
import { registerRoutes } from './_http';

registerRoutes(appRoutes(theApp, registration));
