package org.qnix.abi;

/** Driver Command Queue codes (thesis 3.3.3 and 3.5.3). Zero marks an empty entry. */
public final class DriverCommand
{
    public static final int NONE = 0;
    public static final int NEW_PROCESS = 1;
    public static final int DELETE_PROCESS = 2;

    private DriverCommand()
    {
    }

    public static String name(final int code)
    {
        switch (code)
        {
            case NONE: return "None";
            case NEW_PROCESS: return "New_Process";
            case DELETE_PROCESS: return "Delete_Process";
            default: return "DriverCommand(" + code + ")";
        }
    }
}
