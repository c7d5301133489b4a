// NextFireTimes answers, line by line, what real Quartz says the next fire
// times of a cron expression are. TestNextAgainstRealQuartz runs it with
// Java's source launcher and Debian's libquartz2-java on the classpath.
//
// Input lines:  expression TAB time zone TAB after (Unix milliseconds) TAB count
// Output lines: the fire times in Unix milliseconds, space-separated (fewer
// than count when Quartz finds no more), or "ERR message".
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.util.Date;
import java.util.TimeZone;

import org.quartz.CronExpression;

public class NextFireTimes {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "UTF-8"));
        PrintWriter out = new PrintWriter(System.out);
        String line;
        while ((line = in.readLine()) != null) {
            String[] f = line.split("\t");
            StringBuilder answer = new StringBuilder();
            try {
                CronExpression expr = new CronExpression(f[0]);
                expr.setTimeZone(TimeZone.getTimeZone(f[1]));
                Date at = new Date(Long.parseLong(f[2]));
                int count = Integer.parseInt(f[3]);
                for (int i = 0; i < count; i++) {
                    at = expr.getTimeAfter(at);
                    if (at == null) {
                        break;
                    }
                    if (i > 0) {
                        answer.append(' ');
                    }
                    answer.append(at.getTime());
                }
            } catch (Exception e) {
                answer.setLength(0);
                answer.append("ERR ").append(e.getMessage());
            }
            out.println(answer);
            out.flush();
        }
    }
}
