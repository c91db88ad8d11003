# The plot of `./vcx bench` (run on the host by gnuplot): ib_send_bw --use-srq bandwidth and
# ib_send_lat --use-srq latency against the message size, vcx_0 and rxe0, side by side.
# Inputs (gnuplot -e): bw and lat, files of "size vcx_0 rxe0" lines; out, the PNG.
set terminal pngcairo size 1200,480 font ",10" noenhanced
set output out
set multiplot layout 1,2 title "perftest over loopback in one VM (TCG): vcx_0 and Soft-RoCE rxe0"
set logscale x 2
set xrange [1:2097152]
set xtics ("2" 2, "64" 64, "1K" 1024, "4K" 4096, "64K" 65536, "1M" 1048576)
set xlabel "message size (bytes)"
set grid
set key top left
set logscale y 10
set title "ib_send_bw --use-srq"
set ylabel "MB/s (BW average)"
# Open circles for vcx_0 and a dashed line for rxe0: where both have the same figure (the
# latency under TCG), both stay visible.
plot bw using 1:2 with linespoints lw 2 pt 6 ps 1.8 title "vcx_0", \
     bw using 1:3 with linespoints lw 2 dt 2 pt 5 title "rxe0"
set title "ib_send_lat --use-srq"
set ylabel "usec (t_typical)"
plot lat using 1:2 with linespoints lw 2 pt 6 ps 1.8 title "vcx_0", \
     lat using 1:3 with linespoints lw 2 dt 2 pt 5 title "rxe0"
unset multiplot
