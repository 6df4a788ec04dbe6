package org.devlive.grantforge.kafka.it;

import org.junit.jupiter.api.Test;

/**
 * A client flooding distinct group names while another principal's one real disagreement must stay named in the
 * agent's table. The table, its fair share and its overflow are the agent's, the same on every release, and the
 * questions reach it through the Authorizer call every release makes, which the rest of {@link ShadowMode} checks on
 * each; so the flood runs on the oldest and the newest release (docs/testing.md, "Which checks run on which
 * release").
 */
interface DisagreementFlood {
    @Test
    default void aClientFloodingGroupNamesCannotTakeAnotherPrincipalsDisagreementOutOfTheTable() throws Exception {
        ((ShadowMode) this).floodGroupNamesWhileAnotherPrincipalsDisagreementStaysNamed();
    }
}
