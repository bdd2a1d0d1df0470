/** Sequences (order numbers): HTTP registrations only; the logic lives in shared/sequences. */
import { getSequenceService } from '../shared/sequences/defaults';
import { sequencesRoutes } from '../shared/sequences/routes';
import { registerRoutes } from './_http';

registerRoutes(sequencesRoutes({ service: getSequenceService }));
