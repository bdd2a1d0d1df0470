/** `GET /api/health`: can this instance serve (the configuration, each storage service). */
export { healthRoutes } from './routes';
