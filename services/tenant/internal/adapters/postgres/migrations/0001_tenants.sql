-- Tenants of apps. Billing-state columns are written by billing events; route 17 never sets them.
CREATE TABLE tenants (
    id                                    uuid PRIMARY KEY,
    app_id                                uuid NOT NULL,
    name                                  text NOT NULL,
    description                           text NOT NULL DEFAULT '',
    pspx_one_time_payment_valid_thru      text NOT NULL DEFAULT '',
    company_name                          text NOT NULL DEFAULT '',
    company_vat_id                        text NOT NULL DEFAULT '',
    company_tax_type                      text NOT NULL DEFAULT '',
    company_tax_exempt                    text NOT NULL DEFAULT '',
    is_business_customer                  boolean NOT NULL DEFAULT false,
    is_invoice_pending                    boolean NOT NULL DEFAULT false,
    deleted                               boolean NOT NULL DEFAULT false,
    pspx_customer_id                      text NOT NULL DEFAULT '',
    pspx_price_id                         text NOT NULL DEFAULT '',
    pspx_product_id                       text NOT NULL DEFAULT '',
    pspx_subscription_id                  text NOT NULL DEFAULT '',
    pspx_trialing_price_id                text NOT NULL DEFAULT '',
    pspx_trialing_product_id              text NOT NULL DEFAULT '',
    pspx_trialing_subscription_id         text NOT NULL DEFAULT '',
    pspx_checkout_session_id              text NOT NULL DEFAULT '',
    pspx_default_payment_method_id        text NOT NULL DEFAULT '',
    pspx_subscription_cancel_at_period_end boolean NOT NULL DEFAULT false,
    pspx_subscription_cancel_at           text NOT NULL DEFAULT '',
    pspx_payment_method                   text NOT NULL DEFAULT '',
    mode                                  text NOT NULL DEFAULT '',
    freezed_due_failed_payment            boolean NOT NULL DEFAULT false,
    paid_until                            text NOT NULL DEFAULT '',
    free_until                            text NOT NULL DEFAULT '',
    paid_units                            text NOT NULL DEFAULT '0',
    free_units                            text NOT NULL DEFAULT '0',
    freezed                               boolean NOT NULL DEFAULT false,
    payment_failed                        boolean NOT NULL DEFAULT false,
    payment_failed_count                  integer NOT NULL DEFAULT 0,
    payment_failed_date                   text NOT NULL DEFAULT '',
    created_at                            timestamptz NOT NULL,
    updated_at                            timestamptz NOT NULL
);

CREATE INDEX tenants_app_id ON tenants (app_id);

-- At most one shipping and one billing address per tenant.
CREATE TABLE tenant_addresses (
    id          uuid PRIMARY KEY,
    tenant_id   uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
    type        text NOT NULL CHECK (type IN ('shipping', 'billing')),
    name        text NOT NULL DEFAULT '',
    city        text NOT NULL DEFAULT '',
    country     text NOT NULL DEFAULT '',
    line1       text NOT NULL DEFAULT '',
    line2       text NOT NULL DEFAULT '',
    postal_code text NOT NULL DEFAULT '',
    state       text NOT NULL DEFAULT '',
    deleted     boolean NOT NULL DEFAULT false,
    UNIQUE (tenant_id, type)
);
