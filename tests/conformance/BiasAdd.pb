
3
c0/valuePlaceholder*
dtype0*
shape:
¢
c0/feed_valueConst*
dtype0*}
valuetBr"`$Ïº¿~ã¿-÷Ï¿u{ë>¯*Þ>ëèì¿è9­?µo¾Yr>-[Ú¿&‹·?w×¿™÷“¿±¾¼>ë@ß?î¿—s4?Î¾ÄÝŸ?9ˆ+? ?] º?
2
c0/biasPlaceholder*
dtype0*
shape:
I
c0/feed_biasConst*
dtype0*%
valueB"Ò?I¼¿w>yí‹?
C
c0/opBiasAddc0/valuec0/bias*
T0*
data_formatNHWC

c0/want0Const*
dtype0*}
valuetBr"`Hù¬¾ˆãOÀJè¼¿VÌÆ?~Ç?ø˜TÀÌHÀ?û[??£?RKÀ
šÊ?ü'¿àØ½'Î¿Ö>ðœ?Þh7@„0UÀ^‘Z?äóO?K·@Ï	M¿ø³?ë#@"ª