-- The foreign keys checked every delivery and attempt written with a lookup and a row lock of its
-- own: a third of the cost of recording a delivery. What they guarded is kept by the store instead:
-- the consumer reads an app's endpoints locked against deletion for the rest of its transaction
-- (EndpointsToDeliver), and DeleteEndpoint deletes the endpoint's deliveries and their attempts.
ALTER TABLE deliveries DROP CONSTRAINT IF EXISTS deliveries_endpoint_id_fkey;
ALTER TABLE delivery_attempts DROP CONSTRAINT IF EXISTS delivery_attempts_delivery_id_fkey;
