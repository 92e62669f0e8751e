package org.qnix.host;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

/** A look is due on exactly every PER_LOOK-th empty poll, from the first call on. */
class EmptyPollsTest
{
    @Test
    void aLookIsDueOnEveryPerLookthPoll()
    {
        final EmptyPolls polls = new EmptyPolls();
        int looks = 0;
        for (int poll = 1; poll <= 5 * EmptyPolls.PER_LOOK; poll++)
        {
            if (polls.lookDue())
            {
                looks++;
                assertEquals(0, poll % EmptyPolls.PER_LOOK, "look at poll " + poll);
            }
        }
        assertEquals(5, looks);
    }
}
