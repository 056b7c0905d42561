INSERT INTO public.t VALUES (1, 'C:\dir\');
