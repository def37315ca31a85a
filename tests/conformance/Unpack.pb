
3
c0/valuePlaceholder*
dtype0*
shape:
¢
c0/feed_valueConst*
dtype0*}
valuetBr"`|ó¿%«¿>´à¿LÎL?ÊM?ø-h¾ìÃ?Çµ¿R«œ¿)ä>Aýå=ÑpÁ¿¤NÐ?ç‡ù>ùÝ>ï¿ƒÙ>DcÛ¿PK¿ ”?
*Ê>Q/Õ=¯Ðä¿	§6¿
9
c0/opUnpackc0/value*
T0*

axis*	
num
Y
c0/want0Const*
dtype0*9
value0B." |ó¿%«¿>´à¿LÎL?¤NÐ?ç‡ù>ùÝ>ï¿
Y
c0/want1Const*
dtype0*9
value0B." ÊM?ø-h¾ìÃ?Çµ¿ƒÙ>DcÛ¿PK¿ ”?
Y
c0/want2Const*
dtype0*9
value0B." R«œ¿)ä>Aýå=ÑpÁ¿
*Ê>Q/Õ=¯Ðä¿	§6¿"ª