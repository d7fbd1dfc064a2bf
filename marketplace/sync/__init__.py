"""Each seller's sync with the platform: when their next pull is due, the one table of
their pull state, and the pull itself, which calls the orders pull and the after-sale
(returns and refunds) pull explicitly."""
